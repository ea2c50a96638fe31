"""mcpbox's compatibility layer for Python MCP servers (`mcpbox build`): what lies under an
unmodified server so that it runs as an mcpbox plugin. `boot()` runs first at build time:

- asyncio gets a loop that needs no sockets (loop.py), `ssl` a stand-in (ssl_standin.py: TLS
  is the host's);
- httpx, requests and urllib send over wasi:http (transports.py) when the server uses the network;
- modules of HTTP server frameworks the stdio path never calls become stubs that throw when
  used (`stub()`), as do the SDK's modules mcpbox does not stand in for;
- a log file the sandbox cannot open logs to the host's log instead;
- the server's own modules are compiled now and run per call (`embed()`): module-level code
  that reads the environment, the clock or random numbers sees each call's, never the build's.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import logging
import sys
import types as pytypes


class _StderrStream:
    def write(self, text):
        return sys.stderr.write(text)

    def flush(self):
        sys.stderr.flush()

    def close(self):
        pass


def _log_files_to_stderr():
    original = logging.FileHandler._open

    def _open(self):
        try:
            return original(self)
        except OSError:
            return _StderrStream()
    logging.FileHandler._open = _open


# --- stubs ---------------------------------------------------------------------------------

class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def _refusal(what):
    def refuse(*args, **kwargs):
        raise RuntimeError(f"mcpbox: {what} is not available in a plugin (a built server serves through mcpbox; "
                           "the stdio path never needs it)")
    return refuse


class _StubMeta(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _stub_class(f"{cls.__qualname__}.{name}")


def _stub_class(qualified):
    return _StubMeta(qualified.rsplit(".", 1)[-1], (), {
        "__init__": _refusal(qualified), "__call__": _refusal(qualified), "__qualname__": qualified,
        "__mcpbox_stub__": True})


class _StubModule(pytypes.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = _stub_class(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class _StubFinder(importlib.abc.MetaPathFinder):
    def __init__(self, roots):
        self.roots = set(roots)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, _StubLoader(), is_package=True)
        return None


class _FallbackFinder(importlib.abc.MetaPathFinder):
    """Modules under a package mcpbox stands in for (`mcp.server.sse`, ...) that it does not
    provide: stubs, found after every real finder failed."""

    def __init__(self, roots):
        self.roots = set(roots)

    def find_spec(self, fullname, path=None, target=None):
        if "." in fullname and fullname.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, _StubLoader(), is_package=True)
        return None


def stub(roots):
    sys.meta_path.insert(0, _StubFinder(roots))


# --- the server's own modules, run per call -------------------------------------------------

class _EmbeddedLoader(importlib.abc.Loader):
    def __init__(self, code, filename):
        self.code, self.filename = code, filename

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__file__ = self.filename
        exec(self.code, module.__dict__)


class _EmbeddedFinder(importlib.abc.MetaPathFinder):
    def __init__(self, modules):
        self.modules = modules

    def find_spec(self, fullname, path=None, target=None):
        entry = self.modules.get(fullname)
        if entry is None:
            return None
        code, filename, is_package = entry
        spec = importlib.machinery.ModuleSpec(fullname, _EmbeddedLoader(code, filename), is_package=is_package,
                                              origin=filename)
        if is_package:
            spec.submodule_search_locations = []
        spec.has_location = True
        return spec


EMBEDDED = {}


def embed(root, packages, guest_root="/app"):
    """Compiles every module of the server's own packages (directories or single files under
    `root`) now; they run when a call imports them."""
    import os
    for package in packages:
        base = os.path.join(root, package)
        if os.path.isfile(base + ".py"):
            files = [(package, base + ".py", False)]
        else:
            files = []
            for directory, _dirs, names in os.walk(base):
                if "__init__.py" not in names:  # a namespace package: a module all the same
                    files.append((os.path.relpath(directory, root).replace(os.sep, "."),
                                  os.path.join(directory, "__init__.py"), True))
                for name in names:
                    if name.endswith(".py"):
                        path = os.path.join(directory, name)
                        relative = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                        is_package = name == "__init__.py"
                        module = relative[: -len(".__init__")] if is_package else relative
                        files.append((module, path, is_package))
        for module, path, is_package in files:
            source = b""
            if os.path.exists(path):
                with open(path, "rb") as f:
                    source = f.read()
            filename = guest_root + "/" + os.path.relpath(path, root).replace(os.sep, "/")
            try:
                EMBEDDED[module] = (compile(source, filename, "exec", dont_inherit=True), filename, is_package)
            except SyntaxError as error:
                print(f"mcpbox: {filename} does not compile: {error}", file=sys.stderr)
    sys.meta_path.insert(0, _EmbeddedFinder(EMBEDDED))


def preload(names):
    """Imports the libraries the server's code imports (now, at build time: the component
    carries them initialized); the ones that fail are left to fail when a call imports them."""
    failed = {}
    for name in names:
        if name in sys.modules or name.split(".")[0] in EMBEDDED:
            continue
        try:
            importlib.import_module(name)
        except BaseException as error:  # noqa: BLE001 - any failure is reported, none stops the build
            failed[name] = f"{type(error).__name__}: {error}"
    return failed


def _import_layer():
    """Every module of the layer, now: at run time no file can be found (componentize-py's
    CPython runs from the snapshot), and a server may import any of them in a function."""
    import os
    root = os.path.dirname(os.path.dirname(__file__))
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            if name.endswith(".py") and name != "mcpbox.py":
                relative = os.path.relpath(os.path.join(directory, name), root)[:-3].replace(os.sep, ".")
                module = relative[: -len(".__init__")] if name == "__init__.py" else relative
                if module.startswith("mcpbox_compat.wasi_http") or module == "mcpbox_compat.transports":
                    continue
                importlib.import_module(module)


def _import_codecs():
    """Every codec, now (zipfile asks for cp437, a server for latin-1 or shift_jis: looked up by
    name when used, when no file can be found any more)."""
    import encodings
    import os
    import pkgutil
    for module in pkgutil.iter_modules([os.path.dirname(encodings.__file__)]):
        try:
            importlib.import_module(f"encodings.{module.name}")
        except Exception:  # mbcs and oem exist on Windows only
            pass


# Standard-library modules servers and their libraries import inside functions (or that other
# standard modules import lazily): imported at build time, as no file can be found later.
STANDARD = (
    "argparse", "ast", "base64", "binascii", "bisect", "calendar", "cmath", "codecs", "collections.abc",
    "concurrent.futures", "configparser", "contextlib", "copy", "csv", "dataclasses", "datetime", "decimal",
    "difflib", "email.message", "email.parser", "email.policy", "email.utils", "enum", "fnmatch", "fractions",
    "functools", "getpass", "gettext", "glob", "gzip", "hashlib", "heapq", "hmac", "html", "html.parser",
    "http.client", "http.cookiejar", "http.cookies", "inspect", "io", "ipaddress", "itertools", "json",
    "locale", "logging.handlers", "lzma", "bz2", "math", "mimetypes", "numbers", "operator", "pathlib",
    "platform", "pprint", "queue", "quopri", "random", "re", "secrets", "shlex", "shutil", "socket",
    "sqlite3", "statistics", "string", "struct", "subprocess", "tarfile", "tempfile", "textwrap", "threading",
    "tokenize", "tomllib", "traceback", "typing", "unicodedata", "urllib.error", "urllib.parse",
    "urllib.request", "uuid", "warnings", "weakref", "xml.dom.minidom", "xml.etree.ElementTree",
    "xml.sax.saxutils", "zipfile", "zlib", "zoneinfo",
)


def boot(network, stubs):
    # `ssl` first: the standard library's needs OpenSSL (`_ssl`), which this CPython has not.
    from mcpbox_compat import ssl_standin
    sys.modules["ssl"] = ssl_standin
    from mcpbox_compat import loop
    loop.install()
    _log_files_to_stderr()
    stub(stubs)
    sys.meta_path.append(_FallbackFinder({"mcp", "fastmcp"}))
    if network:
        from mcpbox_compat import transports
        transports.install()
    _import_layer()
    _import_codecs()
    preload(STANDARD)
