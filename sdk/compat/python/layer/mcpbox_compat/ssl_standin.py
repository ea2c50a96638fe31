"""mcpbox's `ssl`: the CPython in a plugin has no OpenSSL, and needs none: a plugin's HTTPS goes
through the host (wasi:http), which makes the TLS connection and checks certificates against
the roots the operator trusts. Code that builds contexts gets objects that accept the usual
calls; their settings are the host's to decide. Raw TLS sockets are refused."""

import enum as _enum

OPENSSL_VERSION = "mcpbox (TLS by the host)"
OPENSSL_VERSION_INFO = (0, 0, 0, 0, 0)
OPENSSL_VERSION_NUMBER = 0
HAS_SNI = HAS_ALPN = HAS_ECDH = HAS_NPN = True
HAS_TLSv1_3 = True
CHANNEL_BINDING_TYPES = []


class SSLError(OSError):
    pass


class SSLCertVerificationError(SSLError, ValueError):
    pass


CertificateError = SSLCertVerificationError


class SSLZeroReturnError(SSLError):
    pass


class SSLWantReadError(SSLError):
    pass


class SSLWantWriteError(SSLError):
    pass


class SSLSyscallError(SSLError):
    pass


class SSLEOFError(SSLError):
    pass


class TLSVersion(_enum.IntEnum):
    MINIMUM_SUPPORTED = -2
    SSLv3 = 768
    TLSv1 = 769
    TLSv1_1 = 770
    TLSv1_2 = 771
    TLSv1_3 = 772
    MAXIMUM_SUPPORTED = -1


class VerifyMode(_enum.IntEnum):
    CERT_NONE = 0
    CERT_OPTIONAL = 1
    CERT_REQUIRED = 2


CERT_NONE, CERT_OPTIONAL, CERT_REQUIRED = VerifyMode.CERT_NONE, VerifyMode.CERT_OPTIONAL, VerifyMode.CERT_REQUIRED


class VerifyFlags(_enum.IntFlag):
    VERIFY_DEFAULT = 0
    VERIFY_CRL_CHECK_LEAF = 4
    VERIFY_CRL_CHECK_CHAIN = 12
    VERIFY_X509_STRICT = 32
    VERIFY_X509_PARTIAL_CHAIN = 0x80000
    VERIFY_X509_TRUSTED_FIRST = 0x8000


VERIFY_DEFAULT = VerifyFlags.VERIFY_DEFAULT
VERIFY_X509_STRICT = VerifyFlags.VERIFY_X509_STRICT
VERIFY_X509_PARTIAL_CHAIN = VerifyFlags.VERIFY_X509_PARTIAL_CHAIN
VERIFY_X509_TRUSTED_FIRST = VerifyFlags.VERIFY_X509_TRUSTED_FIRST


class _SSLMethod(_enum.IntEnum):
    PROTOCOL_TLS = 2
    PROTOCOL_TLS_CLIENT = 16
    PROTOCOL_TLS_SERVER = 17


PROTOCOL_TLS, PROTOCOL_TLS_CLIENT, PROTOCOL_TLS_SERVER = (_SSLMethod.PROTOCOL_TLS, _SSLMethod.PROTOCOL_TLS_CLIENT,
                                                           _SSLMethod.PROTOCOL_TLS_SERVER)
PROTOCOL_SSLv23 = PROTOCOL_TLS


class Options(_enum.IntFlag):
    OP_ALL = 0x80000BFF
    OP_NO_SSLv2 = 0
    OP_NO_SSLv3 = 0x2000000
    OP_NO_TLSv1 = 0x4000000
    OP_NO_TLSv1_1 = 0x10000000
    OP_NO_TLSv1_2 = 0x8000000
    OP_NO_TLSv1_3 = 0x20000000
    OP_NO_COMPRESSION = 0x20000
    OP_NO_TICKET = 0x4000
    OP_NO_RENEGOTIATION = 0x40000000
    OP_CIPHER_SERVER_PREFERENCE = 0x400000
    OP_SINGLE_DH_USE = 0
    OP_SINGLE_ECDH_USE = 0
    OP_ENABLE_MIDDLEBOX_COMPAT = 0x100000
    OP_IGNORE_UNEXPECTED_EOF = 0x80


globals().update(Options.__members__)


class Purpose(_enum.Enum):
    SERVER_AUTH = "1.3.6.1.5.5.7.3.1"
    CLIENT_AUTH = "1.3.6.1.5.5.7.3.2"


class SSLContext:
    def __init__(self, protocol=PROTOCOL_TLS_CLIENT, *args, **kwargs):
        self.protocol = protocol
        self.verify_mode = CERT_REQUIRED
        self.check_hostname = True
        self.options = Options.OP_ALL
        self.verify_flags = VERIFY_DEFAULT
        self.minimum_version = TLSVersion.MINIMUM_SUPPORTED
        self.maximum_version = TLSVersion.MAXIMUM_SUPPORTED
        self.post_handshake_auth = False
        self.keylog_filename = None

    def load_verify_locations(self, cafile=None, capath=None, cadata=None):
        pass

    def load_cert_chain(self, certfile, keyfile=None, password=None):
        pass

    def load_default_certs(self, purpose=Purpose.SERVER_AUTH):
        pass

    def set_default_verify_paths(self):
        pass

    def set_ciphers(self, ciphers):
        pass

    def set_alpn_protocols(self, protocols):
        pass

    def set_npn_protocols(self, protocols):
        pass

    def get_ciphers(self):
        return []

    def get_ca_certs(self, binary_form=False):
        return []

    def cert_store_stats(self):
        return {"x509": 0, "crl": 0, "x509_ca": 0}

    def wrap_socket(self, *args, **kwargs):
        raise SSLError("mcpbox: no TLS sockets in a plugin; HTTPS goes through the host")

    def wrap_bio(self, *args, **kwargs):
        raise SSLError("mcpbox: no TLS sockets in a plugin; HTTPS goes through the host")


class SSLSocket:
    pass


class SSLObject:
    pass


class MemoryBIO:
    def __init__(self):
        raise SSLError("mcpbox: no TLS objects in a plugin; HTTPS goes through the host")


def create_default_context(purpose=Purpose.SERVER_AUTH, *, cafile=None, capath=None, cadata=None):
    return SSLContext(PROTOCOL_TLS_CLIENT)


_create_default_https_context = create_default_context


def _create_unverified_context(*args, **kwargs):
    context = SSLContext(PROTOCOL_TLS_CLIENT)
    context.check_hostname, context.verify_mode = False, CERT_NONE
    return context


def get_default_verify_paths():
    import collections
    paths = collections.namedtuple("DefaultVerifyPaths", "cafile capath openssl_cafile_env openssl_cafile "
                                   "openssl_capath_env openssl_capath")
    return paths(None, None, "SSL_CERT_FILE", "", "SSL_CERT_DIR", "")


def wrap_socket(*args, **kwargs):
    raise SSLError("mcpbox: no TLS sockets in a plugin; HTTPS goes through the host")


def match_hostname(cert, hostname):
    pass


def __getattr__(name):
    if name.isupper():
        return 0
    raise AttributeError(name)
