import { isIP } from 'node:net';
import { OIDC_SIGNING_ALGORITHMS, ProvisionalLimits } from '@hearth/protocol';
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, type JWK, type JWTPayload } from 'jose';
import { HearthError } from '../../kernel/errors.js';
import { type OutboundPolicy, outboundRequest, outboundUrlProblem } from '../../kernel/outbound.js';

/** Provider fetches follow the one outbound policy (extra trusted CA, the development loopback switch). */
export type ProviderFetchOptions = OutboundPolicy;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const FORBIDDEN_SUFFIXES = ['.local', '.arpa', '.internal', '.localhost'];
const FETCH_TIMEOUT_MS = 10_000;
const MAX_DOCUMENT_BYTES = 1024 * 1024;

/**
 * The issuer URL rules (PROTOCOL.md §B.2) on top of the outbound policy (https only, no credentials): no
 * query or fragment; a hostname of two labels or more, not under .local/.arpa/.internal/.localhost, not an
 * IP literal. Any port is fine. Answers the canonical issuer (no trailing slash), or undefined when a rule fails.
 */
export function checkProviderUrl(
  raw: string,
  options: ProviderFetchOptions,
  /** A key-set or verification URL may carry a query; an issuer may not. */
  allowQuery = false,
): string | undefined {
  if (outboundUrlProblem(raw, options, { query: allowQuery }) !== undefined) return undefined;
  const host = new URL(raw).hostname.toLowerCase();
  const loopback = options.allowLoopback && LOOPBACK_HOSTS.has(host);
  if (!loopback) {
    if (isIP(host) !== 0 || host.startsWith('[')) return undefined;
    const labels = host.split('.');
    if (labels.length < 2 || labels.some((label) => label === '')) return undefined;
    if (FORBIDDEN_SUFFIXES.some((suffix) => host.endsWith(suffix))) return undefined;
  }
  return allowQuery ? raw : raw.replace(/\/+$/, '');
}

export interface FetchedJson {
  status: number;
  body: unknown;
}

/**
 * One HTTPS exchange with a provider, under the outbound policy: the resolved address checked, redirects
 * never followed (PROTOCOL.md §B.2; a 3xx is answered as it is and refused by the caller like any non-200).
 */
export async function providerRequest(
  url: string,
  options: ProviderFetchOptions,
  post?: Record<string, unknown>,
): Promise<FetchedJson | undefined> {
  const payload = post === undefined ? undefined : JSON.stringify(post);
  const answer = await outboundRequest(url, options, {
    method: payload === undefined ? 'GET' : 'POST',
    headers: {
      accept: 'application/json',
      ...(payload === undefined
        ? {}
        : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
    },
    ...(payload === undefined ? {} : { body: payload }),
    timeoutMs: FETCH_TIMEOUT_MS,
    maxBytes: MAX_DOCUMENT_BYTES,
    rules: { query: true },
  });
  if (answer.error !== null) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(answer.body.toString('utf8'));
  } catch {
    body = undefined;
  }
  return { status: answer.status, body };
}

export interface OidcConfiguration {
  issuer: string;
  jwksUri: string;
  /** The announced algorithms this server accepts; unsupported ones are ignored. */
  algorithms: string[];
}

/**
 * Validates an issuer as the seed asks when a configuration is created or edited: URL rules, discovery
 * without redirects, exact issuer, a usable key set (fetched without redirects too). Each failure has its code.
 */
export async function discover(issuerUrl: string, options: ProviderFetchOptions): Promise<OidcConfiguration> {
  const issuer = checkProviderUrl(issuerUrl, options);
  if (!issuer) throw new HearthError('ProvisionalOIDCConfigurationNotFound');
  const answer = await providerRequest(`${issuer}/.well-known/openid-configuration`, options);
  const document = answer?.status === 200 ? answer.body : undefined;
  if (!isObject(document)) throw new HearthError('ProvisionalOIDCConfigurationNotFound');
  if (document['issuer'] !== issuer && document['issuer'] !== issuerUrl) {
    throw new HearthError('ProvisionalIssuerMismatch');
  }
  const jwksUri = document['jwks_uri'];
  const announced = document['id_token_signing_alg_values_supported'];
  if (typeof jwksUri !== 'string' || !Array.isArray(announced)) {
    throw new HearthError('ProvisionalOIDCConfigurationNotFound');
  }
  const algorithms = announced.filter(
    (alg): alg is string =>
      typeof alg === 'string' && (OIDC_SIGNING_ALGORITHMS as readonly string[]).includes(alg),
  );
  if (algorithms.length === 0) throw new HearthError('ProvisionalOIDCConfigurationNotFound');
  if (!checkProviderUrl(jwksUri, options, true)) throw new HearthError('ProvisionalOIDCJWKSNotFound');
  await fetchKeySet(jwksUri, options);
  return { issuer: document['issuer'] as string, jwksUri, algorithms };
}

/** The key set at `jwksUri` (no redirects); 530009 when it cannot be had. */
export async function fetchKeySet(jwksUri: string, options: ProviderFetchOptions): Promise<JWK[]> {
  const answer = await providerRequest(jwksUri, options);
  const body = answer?.status === 200 ? answer.body : undefined;
  const keys = isObject(body) ? body['keys'] : undefined;
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every(isObject)) {
    throw new HearthError('ProvisionalOIDCJWKSNotFound');
  }
  return keys as JWK[];
}

export interface VerifiedIdToken {
  subject: string;
  preferredUsername: string | undefined;
}

/** The unverified issuer of an ID token, to pick the configuration; 530020 when it is no JWT. */
export function peekIssuer(token: string): string | undefined {
  let payload: JWTPayload;
  try {
    payload = decodeJwt(token);
  } catch {
    throw new HearthError('ProvisionalInvalidOIDCJWT');
  }
  return typeof payload.iss === 'string' ? payload.iss : undefined;
}

/**
 * ID-token rules (PROTOCOL.md §B.2): an allowed asymmetric algorithm, `kid` naming a key of the set, a valid
 * signature, `iss` exact, `sub`, `aud` including the client id, `exp` not passed, `iat` at most 7 days old.
 */
export async function verifyIdToken(
  token: string,
  expected: { issuer: string; clientId: string; algorithms: readonly string[]; now: number },
  keys: (refresh: boolean) => Promise<JWK[]>,
): Promise<VerifiedIdToken> {
  const invalid = () => new HearthError('ProvisionalInvalidOIDCJWT');
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw invalid();
  }
  const alg = header.alg;
  if (typeof alg !== 'string' || !expected.algorithms.includes(alg)) throw invalid();
  if (typeof header.kid !== 'string' || header.kid === '')
    throw new HearthError('ProvisionalOIDCJWTMissingKid');
  let jwk = (await keys(false)).find((key) => key.kid === header.kid);
  // A key the cached set does not know may be newly rotated in: look once more.
  jwk ??= (await keys(true)).find((key) => key.kid === header.kid);
  if (!jwk) throw invalid();
  let payload: JWTPayload;
  try {
    const key = await importJWK(jwk, alg);
    const verified = await compactVerify(token, key, { algorithms: [alg] });
    payload = JSON.parse(new TextDecoder().decode(verified.payload)) as JWTPayload;
  } catch {
    throw invalid();
  }
  if (payload.iss !== expected.issuer) throw new HearthError('ProvisionalIssuerMismatch');
  if (typeof payload.sub !== 'string' || payload.sub === '') throw invalid();
  const audiences = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
  if (!Array.isArray(audiences) || !audiences.includes(expected.clientId)) {
    throw new HearthError('ProvisionalAudienceMismatch');
  }
  if (typeof payload.exp !== 'number') throw invalid();
  if (payload.exp * 1000 <= expected.now) throw new HearthError('ProvisionalIdTokenExpired');
  if (typeof payload.iat !== 'number') throw invalid();
  if (expected.now - payload.iat * 1000 > ProvisionalLimits.idTokenMaxAgeMs) {
    throw new HearthError('ProvisionalIdTokenTooOld');
  }
  const name = payload['preferred_username'];
  const preferredUsername =
    typeof name === 'string' &&
    name.length >= ProvisionalLimits.displayNameMinLength &&
    name.length <= ProvisionalLimits.displayNameMaxLength
      ? name
      : undefined;
  return { subject: payload.sub, preferredUsername };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
