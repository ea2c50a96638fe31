// A certified OpenID provider (the npm package oidc-provider) on loopback, for the
// authorization tests and for trying `[auth]` by hand (scripts/setup-oidc-provider.sh prints
// how to run it). It issues JWT access tokens (ES256, RFC 9068) by the client credentials grant,
// for the resource a client names (RFC 8707).
//
// usage: node oidc-provider.mjs PORT
// clients (secret: ID-secret): ada (tools:read tools:call), bob (tools:read),
// brief (tools:read, tokens that live 1 s), carol (tools:read, opaque tokens: checked by
// introspection), mcpbox (no grant: it introspects). Prints "ready ISSUER" once listening.
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

const port = Number(process.argv[2]);
const issuer = `http://127.0.0.1:${port}`;
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const signing = { ...(await exportJWK(privateKey)), kid: 'first', alg: 'ES256', use: 'sig' };
const client = (id, scope) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  id_token_signed_response_alg: 'ES256',
  scope,
});
const provider = new Provider(issuer, {
  clients: [
    client('ada', 'tools:read tools:call'),
    client('bob', 'tools:read'),
    client('brief', 'tools:read'),
    client('carol', 'tools:read'),
    { ...client('mcpbox', 'tools:read'), grant_types: [] },
  ],
  scopes: ['tools:read', 'tools:call'],
  jwks: { keys: [signing] },
  features: {
    devInteractions: { enabled: false },
    introspection: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // A token is for the resource the client asks for: the MCP server checks it is itself.
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource, client) => ({
        scope: 'tools:read tools:call',
        audience: resource,
        accessTokenTTL: client.clientId === 'brief' ? 1 : 300,
        accessTokenFormat: client.clientId === 'carol' ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
  ttl: { ClientCredentials: (ctx, token, client) => (client.clientId === 'brief' ? 1 : 300) },
});
provider.listen(port, '127.0.0.1', () => console.log(`ready ${issuer}`));
