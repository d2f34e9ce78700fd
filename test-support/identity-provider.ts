import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

/**
 * An identity provider in this process for tests: its own CA and server certificate (made with the openssl
 * CLI in a temporary directory, nothing kept), an HTTPS server on loopback serving OIDC discovery documents
 * and key sets for any number of issuers, and a verification endpoint for opaque tickets (Steam, EOS).
 */
export interface TestIssuer {
  /** `https://localhost:PORT/issuers/NAME`. */
  readonly url: string;
  readonly kid: string;
  /** Signs an ID token with this issuer's key (or another algorithm/key/kid, for the refusal tests). */
  sign(claims: JWTPayload, options?: SignOptions): Promise<string>;
  /** Valid claims for `clientId` at `nowMs`: iss, sub, aud, iat, exp. */
  claims(clientId: string, nowMs: number, extra?: JWTPayload): JWTPayload;
}

export interface SignOptions {
  alg?: string;
  /** null: no kid header. */
  kid?: string | null;
  /** HS256 and other secrets. */
  secret?: Uint8Array;
  key?: CryptoKey;
}

export interface IssuerOptions {
  /** The discovery document answers a redirect to this URL instead. */
  discoveryRedirect?: string;
  /** The key set answers a redirect instead. */
  jwksRedirect?: string;
  /** Replaces fields of the discovery document (a wrong issuer, HS256 only…). */
  discovery?: Record<string, unknown>;
}

export interface TestIdentityProvider {
  readonly caFile: string;
  readonly origin: string;
  addIssuer(name: string, options?: IssuerOptions): Promise<TestIssuer>;
  /** The verification endpoint (Steam/EOS): a ticket is valid when registered here. */
  readonly verificationUrl: string;
  acceptTicket(ticket: string, user: { user_id: string; display_name?: string }): void;
  close(): Promise<void>;
}

interface Route {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

function makeCertificates(dir: string): { ca: string; key: string; cert: string } {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  // -subj keeps openssl from prompting; the CA flag is what makes it a CA.
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Hearth Test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  run(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=localhost',
  );
  writeFileSync(
    join(dir, 'server.ext'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  run(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'server.ext',
  );
  return {
    ca: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    key: readFileSync(join(dir, 'server.key'), 'utf8'),
    cert: readFileSync(join(dir, 'server.pem'), 'utf8'),
  };
}

export async function startIdentityProvider(): Promise<TestIdentityProvider> {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-idp-'));
  const { key, cert } = makeCertificates(dir);
  const routes = new Map<string, Route>();
  const tickets = new Map<string, { user_id: string; display_name?: string }>();
  const server: Server = createServer({ key, cert }, (request, response) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    if (path === '/verify' && request.method === 'POST') {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        let token: unknown;
        try {
          token = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { token?: unknown }).token;
        } catch {
          token = undefined;
        }
        const user = typeof token === 'string' ? tickets.get(token) : undefined;
        response.writeHead(user ? 200 : 401, { 'content-type': 'application/json' });
        response.end(JSON.stringify(user ?? { error: 'invalid ticket' }));
      });
      return;
    }
    const route = routes.get(path);
    if (!route) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(route.status, { 'content-type': 'application/json', ...route.headers });
    response.end(route.body === undefined ? '' : JSON.stringify(route.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const origin = `https://localhost:${port}`;

  return {
    caFile: join(dir, 'ca.pem'),
    origin,
    verificationUrl: `${origin}/verify`,
    acceptTicket(ticket, user) {
      tickets.set(ticket, user);
    },
    async addIssuer(name, options = {}) {
      const base = `/issuers/${name}`;
      const url = `${origin}${base}`;
      const kid = `${name}-key-1`;
      const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
      const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
      routes.set(
        `${base}/.well-known/openid-configuration`,
        options.discoveryRedirect
          ? { status: 302, headers: { location: options.discoveryRedirect } }
          : {
              status: 200,
              body: {
                issuer: url,
                jwks_uri: `${url}/jwks`,
                id_token_signing_alg_values_supported: ['RS256', 'HS256'],
                response_types_supported: ['id_token'],
                subject_types_supported: ['public'],
                ...options.discovery,
              },
            },
      );
      routes.set(
        `${base}/jwks`,
        options.jwksRedirect
          ? { status: 302, headers: { location: options.jwksRedirect } }
          : { status: 200, body: { keys: [jwk] } },
      );
      return {
        url,
        kid,
        claims(clientId, nowMs, extra = {}) {
          const now = Math.floor(nowMs / 1000);
          return { iss: url, sub: `${name}-player`, aud: clientId, iat: now, exp: now + 3600, ...extra };
        },
        async sign(claims, signOptions = {}) {
          const alg = signOptions.alg ?? 'RS256';
          const header = {
            alg,
            typ: 'JWT',
            ...(signOptions.kid === null ? {} : { kid: signOptions.kid ?? kid }),
          };
          return new SignJWT(claims)
            .setProtectedHeader(header)
            .sign(signOptions.secret ?? signOptions.key ?? privateKey);
        },
      };
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
