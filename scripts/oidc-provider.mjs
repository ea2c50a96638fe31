// A certified OpenID provider (the npm package oidc-provider) on loopback, for the
// authorization tests and for trying `[auth]` by hand (scripts/setup-oidc-provider.sh prints
// how to run it). It issues JWT access tokens (ES256, RFC 9068) by the client credentials grant,
// for the resource a client names (RFC 8707).
//
// Clients may revoke their own tokens (RFC 7009, POST /token/revocation).
//
// usage: node oidc-provider.mjs [127.0.0.1:]PORT [KID]   (KID names its signing key, `first` by default:
// started again on the same port with another, it stands for the provider after a key rotation)
// clients (secret: ID-secret): ada (tools:read tools:call files), bob (tools:read),
// brief (tools:read, tokens that live 1 s), early (tools:read, tokens valid from an hour on:
// `nbf`), carol (tools:read, opaque tokens: checked by
// introspection), mcpbox (no grant: it introspects); with MCPBOX_LINK_BASES, link and thirdparty
// (below). Prints "ready ISSUER" once listening.
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

const port = Number(String(process.argv[2]).split(':').pop());
const issuer = `http://127.0.0.1:${port}`;
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const signing = { ...(await exportJWK(privateKey)), kid: process.argv[3] ?? 'first', alg: 'ES256', use: 'sig' };
const client = (id, scope) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  id_token_signed_response_alg: 'ES256',
  scope,
});
// The token vault's tests (MCPBOX_LINK_BASES: the mcpbox origins, comma-separated): `link`,
// mcpbox's client that signs a link's opener in, and `thirdparty`, the account a user links
// (authorization code with refresh tokens; its access tokens, for the userinfo endpoint, live 2 s).
const bases = (process.env.MCPBOX_LINK_BASES ?? '').split(',').filter(Boolean);
const vaultClients = bases.length === 0 ? [] : [
  {
    ...client('link', 'openid tools:read tools:call files'),
    grant_types: ['authorization_code'],
    response_types: ['code'],
    redirect_uris: bases.map((base) => `${base}/link/signed-in`),
  },
  {
    ...client('thirdparty', 'openid'),
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: bases.map((base) => `${base}/link/callback`),
  },
];
const provider = new Provider(issuer, {
  clients: [
    client('ada', 'tools:read tools:call files'),
    client('bob', 'tools:read'),
    client('brief', 'tools:read'),
    client('early', 'tools:read'),
    client('carol', 'tools:read'),
    { ...client('mcpbox', 'tools:read'), grant_types: [] },
    ...vaultClients,
  ],
  scopes: ['tools:read', 'tools:call', 'files'],
  // Refresh tokens for the clients that ask for them (MCP clients do, in their registration).
  issueRefreshToken: (ctx, client) => client.grantTypeAllowed('refresh_token'),
  // Registered clients get the one algorithm this provider signs with.
  clientDefaults: { id_token_signed_response_alg: 'ES256', grant_types: ['authorization_code'], response_types: ['code'] },
  jwks: { keys: [signing] },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // A token is for the resource the client asks for: the MCP server checks it is itself.
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource, client) => ({
        scope: 'tools:read tools:call files',
        audience: resource,
        accessTokenTTL: client.clientId === 'brief' ? 1 : 300,
        accessTokenFormat: client.clientId === 'carol' ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
  formats: {
    customizers: {
      jwt: (ctx, token, jwt) => {
        if (token.clientId === 'early') jwt.payload.nbf = Math.floor(Date.now() / 1000) + 3600;
      },
    },
  },
  ttl: {
    ClientCredentials: (ctx, token, client) => (client.clientId === 'brief' ? 1 : 300),
    AccessToken: (ctx, token, client) => (client.clientId === 'thirdparty' ? 2 : 3600),
  },
});
provider.on('server_error', (ctx, error) => console.error('server_error', error));
provider.listen(port, '127.0.0.1', () => console.log(`ready ${issuer}`));
