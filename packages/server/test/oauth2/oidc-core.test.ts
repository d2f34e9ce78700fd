import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, ManualClock } from '@hearth/server';
import {
  type CompactJWSHeaderParameters,
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors,
  importJWK,
  type JWK,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from 'jose';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  createGame,
  createPlayer,
  grantTokens,
  type Tokens,
  tokenRequest,
} from '../../../../test-support/oauth.js';

/**
 * OpenID Connect Core 1.0 (with Discovery 1.0) as a relying party sees it: the discovery document, ID tokens
 * checked by an independent verifier (jose alone), signing-key rotation and persistence, UserInfo and
 * the platform's GET /oauth2/@me (PROTOCOL.md §C.8).
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const TOKEN_TTL_SECONDS = 604800;
/** How long a node keeps signing with the key it loaded (keys.ts ACTIVE_KEY_CACHE_MS). */
const SIGNING_KEY_CACHE_MS = 60_000;
/** A whole second an hour ago: ID tokens issued on this clock are valid now for a real-time verifier. */
const T0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
const T0_SECONDS = T0 / 1000;
const UNAUTHORIZED = { code: 0, message: '401: Unauthorized' };

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint: string;
  revocation_endpoint: string;
  jwks_uri: string;
  [field: string]: unknown;
}

const opened: TestHearth[] = [];
const directories: string[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((hearth) => hearth.close()));
});
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

async function start(overrides: Partial<Config> = {}, clock = new ManualClock(T0)) {
  const hearth = await startHearth(overrides, clock);
  opened.push(hearth);
  return { hearth, clock };
}

async function discover(hearth: TestHearth): Promise<Discovery> {
  const response = await fetch(`${hearth.url}/.well-known/openid-configuration`);
  expect(response.status).toBe(200);
  return (await response.json()) as Discovery;
}

/**
 * The relying party: fetches discovery and the JWKS and checks the ID token with jose alone (§3.1.3.7).
 * A fresh key set each time, so a rotation is seen at once.
 */
async function verifyIdToken(hearth: TestHearth, idToken: string, clientId: string, issuer?: string) {
  const discovery = await discover(hearth);
  const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));
  return jwtVerify(idToken, jwks, { issuer: issuer ?? discovery.issuer, audience: clientId });
}

async function keyIds(hearth: TestHearth): Promise<string[]> {
  const response = await hearth.api('/oauth2/keys');
  const body = (await response.json()) as { keys: JWK[] };
  return body.keys.map((key) => key.kid ?? '');
}

/** OIDC Core §3.1.3.6: base64url of the left half of the SHA-256 of the access token. */
function atHash(accessToken: string): string {
  const digest = createHash('sha256').update(accessToken).digest();
  return digest.subarray(0, 16).toString('base64url');
}

function idTokenOf(tokens: Tokens): string {
  if (tokens.id_token === undefined) throw new Error(`no id_token in ${JSON.stringify(tokens)}`);
  return tokens.id_token;
}

/** Replaces one character of a base64url segment with a different one. */
function flip(segment: string, at: number): string {
  const current = segment[at];
  return `${segment.slice(0, at)}${current === 'A' ? 'B' : 'A'}${segment.slice(at + 1)}`;
}

describe('OpenID Connect Core 1.0', () => {
  describe('Discovery 1.0', () => {
    it('Discovery §3, §4.3: the issuer is the server URL and every endpoint it lists answers', async () => {
      const { hearth } = await start();
      const discovery = await discover(hearth);
      expect(discovery).toMatchObject({
        issuer: hearth.url,
        authorization_endpoint: `${hearth.url}/oauth2/authorize`,
        token_endpoint: `${hearth.url}/api/v10/oauth2/token`,
        userinfo_endpoint: `${hearth.url}/api/v10/oauth2/userinfo`,
        revocation_endpoint: `${hearth.url}/api/v10/oauth2/token/revoke`,
        jwks_uri: `${hearth.url}/api/v10/oauth2/keys`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        code_challenge_methods_supported: ['S256'],
      });
      expect(discovery['scopes_supported']).toEqual(expect.arrayContaining(['openid', 'identify', 'email']));

      const game = await createGame(hearth);
      const authorize = await fetch(
        `${discovery.authorization_endpoint}?${new URLSearchParams({
          client_id: game.id,
          response_type: 'code',
          scope: 'openid identify',
          redirect_uri: 'http://127.0.0.1/callback',
        })}`,
        { redirect: 'manual' },
      );
      expect(authorize.status).toBe(200);
      expect(authorize.headers.get('content-type')).toBe('text/html; charset=utf-8');

      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const token = await fetch(discovery.token_endpoint, {
        method: 'POST',
        headers: form,
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: 'not-a-code',
          redirect_uri: 'http://127.0.0.1/callback',
          client_id: game.id,
          client_secret: game.clientSecret,
        }),
      });
      expect(token.status).toBe(400);
      expect(await token.json()).toEqual({
        error: 'invalid_grant',
        error_description: 'Invalid "code" in request.',
      });

      const revocation = await fetch(discovery.revocation_endpoint, {
        method: 'POST',
        headers: form,
        body: new URLSearchParams({ token: 'unknown', client_id: game.id, client_secret: game.clientSecret }),
      });
      expect(revocation.status).toBe(200);
      expect(await revocation.json()).toEqual({});

      // RFC 6750 §3.1: no credentials, so the challenge carries no error code.
      const userinfo = await fetch(discovery.userinfo_endpoint);
      expect(userinfo.status).toBe(401);
      expect(userinfo.headers.get('www-authenticate')).toBe('Bearer');
      expect(await userinfo.json()).toEqual(UNAUTHORIZED);

      const jwks = await fetch(discovery.jwks_uri);
      expect(jwks.status).toBe(200);
      expect(((await jwks.json()) as { keys: JWK[] }).keys).toHaveLength(1);
    });

    it('§10.1 the JWKS publishes public RSA signing keys only, never private parameters', async () => {
      const { hearth } = await start();
      const response = await fetch((await discover(hearth)).jwks_uri);
      const { keys } = (await response.json()) as { keys: JWK[] };
      expect(keys).toHaveLength(1);
      const [key] = keys;
      expect(Object.keys(key ?? {}).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
      expect(key).toMatchObject({ kty: 'RSA', use: 'sig', alg: 'RS256', e: 'AQAB' });
    });
  });

  describe('§2 ID Token, §3.1.3.7 validated by an independent verifier', () => {
    it('§3.1.3.7 jose alone (discovery + remote JWKS) validates the ID token of a code flow with openid and a nonce', async () => {
      const { hearth, clock } = await start();
      const player = await createPlayer(hearth);
      const game = await createGame(hearth);
      clock.advance(90_000); // the player signed in at T0; the code is issued 90 s later
      const nonce = 'n-0S6_WzA2Mj';
      const tokens = await grantTokens(hearth, game, player.token, 'openid identify', { nonce });
      const idToken = idTokenOf(tokens);

      const discovery = await discover(hearth);
      const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));
      const { payload, protectedHeader } = await jwtVerify(idToken, jwks, {
        issuer: discovery.issuer,
        audience: game.id,
      });

      expect(protectedHeader).toEqual({
        alg: 'RS256',
        kid: (await keyIds(hearth))[0],
        typ: 'JWT',
      });
      expect(payload).toEqual({
        iss: hearth.url,
        sub: player.user.id,
        aud: [game.id],
        iat: T0_SECONDS + 90,
        exp: T0_SECONDS + 90 + TOKEN_TTL_SECONDS,
        auth_time: T0_SECONDS,
        nonce,
        at_hash: atHash(tokens.access_token),
      } satisfies JWTPayload);
    });

    it('§2 exp is iat + 604800, auth_time is in seconds and not after iat', async () => {
      const { hearth } = await start();
      const player = await createPlayer(hearth);
      const game = await createGame(hearth);
      const tokens = await grantTokens(hearth, game, player.token, 'openid', { nonce: 'abc' });
      const { payload } = await verifyIdToken(hearth, idTokenOf(tokens), game.id);
      const { iat, exp } = payload;
      const authTime = payload['auth_time'];
      if (typeof iat !== 'number' || typeof exp !== 'number' || typeof authTime !== 'number') {
        throw new Error(`numeric iat, exp and auth_time expected: ${JSON.stringify(payload)}`);
      }
      expect(exp).toBe(iat + 604800);
      expect(Number.isInteger(authTime)).toBe(true);
      expect(authTime).toBeLessThanOrEqual(iat);
      expect(tokens.expires_in).toBe(exp - iat);
    });

    it('§3.1.3.6 at_hash is the base64url left half of SHA-256 of the access token', async () => {
      const { hearth } = await start();
      const player = await createPlayer(hearth);
      const game = await createGame(hearth);
      const tokens = await grantTokens(hearth, game, player.token, 'openid identify');
      const { payload } = await verifyIdToken(hearth, idTokenOf(tokens), game.id);
      expect(payload['at_hash']).toBe(atHash(tokens.access_token));
      expect(payload['at_hash']).toMatch(/^[A-Za-z0-9_-]{22}$/);
      // §3.1.2.1: no nonce sent, none echoed.
      expect(payload).not.toHaveProperty('nonce');
    });

    it('RFC 7515 §3.1, §5.1: the ID token is, byte for byte, the compact JWS jose makes of its header and claims', async () => {
      const { hearth } = await start();
      const player = await createPlayer(hearth);
      const game = await createGame(hearth);
      const tokens = await grantTokens(hearth, game, player.token, 'openid identify', { nonce: 'n-1' });
      const idToken = idTokenOf(tokens);
      const [header = '', payload = ''] = idToken.split('.');
      const row = await hearth.storage.db
        .selectFrom('signing_keys')
        .select('private_jwk')
        .where('retired_at', 'is', null)
        .executeTakeFirstOrThrow();
      const key = await importJWK(JSON.parse(row.private_jwk) as JWK, 'RS256');
      // RS256 (RSASSA-PKCS1-v1_5) is deterministic: the same input and key give the same signature.
      const reference = await new SignJWT(
        JSON.parse(Buffer.from(payload, 'base64url').toString()) as JWTPayload,
      )
        .setProtectedHeader(
          JSON.parse(Buffer.from(header, 'base64url').toString()) as CompactJWSHeaderParameters,
        )
        .sign(key);
      expect(idToken).toBe(reference);
      expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({
        alg: 'RS256',
        kid: (await keyIds(hearth))[0],
        typ: 'JWT',
      });
    });

    it('§3.1.3.3 no id_token without the openid scope', async () => {
      const { hearth } = await start();
      const player = await createPlayer(hearth);
      const game = await createGame(hearth);
      const tokens = await grantTokens(hearth, game, player.token, 'identify email', { nonce: 'ignored' });
      expect(Object.keys(tokens).sort()).toEqual([
        'access_token',
        'expires_in',
        'refresh_token',
        'scope',
        'token_type',
      ]);
    });

    it('§3.1.3.7 a token for another client fails the audience check', async () => {
      const { hearth } = await start();
      const player = await createPlayer(hearth);
      const game = await createGame(hearth);
      const other = await createGame(hearth);
      const tokens = await grantTokens(hearth, game, player.token, 'openid');
      await expect(verifyIdToken(hearth, idTokenOf(tokens), other.id)).rejects.toMatchObject({
        code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
        claim: 'aud',
      });
    });

    it('§3.1.3.7 a tampered ID token (signature or payload) fails jose verification', async () => {
      const { hearth } = await start();
      const player = await createPlayer(hearth);
      const other = await createPlayer(hearth);
      const game = await createGame(hearth);
      const idToken = idTokenOf(await grantTokens(hearth, game, player.token, 'openid identify'));
      const [header = '', payload = '', signature = ''] = idToken.split('.');
      await expect(verifyIdToken(hearth, idToken, game.id)).resolves.toBeDefined();

      // A character in the middle of the signature (the last one may only hold padding bits).
      const badSignature = `${header}.${payload}.${flip(signature, Math.floor(signature.length / 2))}`;
      await expect(verifyIdToken(hearth, badSignature, game.id)).rejects.toBeInstanceOf(
        errors.JWSSignatureVerificationFailed,
      );

      // A character of the payload, and a payload that claims another subject.
      const flippedPayload = `${header}.${flip(payload, Math.floor(payload.length / 2))}.${signature}`;
      await expect(verifyIdToken(hearth, flippedPayload, game.id)).rejects.toBeInstanceOf(
        errors.JWSSignatureVerificationFailed,
      );
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as JWTPayload;
      const forged = Buffer.from(JSON.stringify({ ...claims, sub: other.user.id })).toString('base64url');
      await expect(verifyIdToken(hearth, `${header}.${forged}.${signature}`, game.id)).rejects.toBeInstanceOf(
        errors.JWSSignatureVerificationFailed,
      );

      // An unsigned token with the same claims is no ID token.
      const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      await expect(verifyIdToken(hearth, `${none}.${payload}.`, game.id)).rejects.toBeInstanceOf(
        errors.JOSENotSupported,
      );
    });

    it('§12.2 an ID token from a refresh keeps iss, sub and aud, with a new iat and no nonce', async () => {
      const { hearth, clock } = await start();
      const player = await createPlayer(hearth);
      const game = await createGame(hearth);
      const first = await grantTokens(hearth, game, player.token, 'openid identify', { nonce: 'first' });
      clock.advance(3_000);
      const response = await tokenRequest(hearth, {
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token ?? '',
        client_id: game.id,
        client_secret: game.clientSecret,
      });
      expect(response.status).toBe(200);
      const refreshed = (await response.json()) as Tokens;
      const { payload } = await verifyIdToken(hearth, idTokenOf(refreshed), game.id);
      const { auth_time: authTime, ...claims } = payload;
      expect(claims).toEqual({
        iss: hearth.url,
        sub: player.user.id,
        aud: [game.id],
        iat: T0_SECONDS + 3,
        exp: T0_SECONDS + 3 + TOKEN_TTL_SECONDS,
        at_hash: atHash(refreshed.access_token),
      });
      // §12.2: auth_time may be left out; when present it is the original sign-in's, not the refresh's.
      if (authTime !== undefined) expect(authTime).toBe(T0_SECONDS);
    });
  });

  describe('§10.1.1 rotation of asymmetric signing keys', () => {
    it('§10.1.1 after rotate() new ID tokens use the new kid and tokens signed before still verify', async () => {
      const { hearth, clock } = await start();
      const player = await createPlayer(hearth);
      const game = await createGame(hearth);
      const before = idTokenOf(await grantTokens(hearth, game, player.token, 'openid'));
      const oldKid = decodeProtectedHeader(before).kid;
      expect(await keyIds(hearth)).toEqual([oldKid]);

      clock.advance(60_000);
      const newKid = await hearth.services.keys.rotate();
      expect(newKid).not.toBe(oldKid);
      expect(await keyIds(hearth)).toEqual([newKid, oldKid]);

      await expect(verifyIdToken(hearth, before, game.id)).resolves.toMatchObject({
        protectedHeader: { kid: oldKid },
      });
      const after = idTokenOf(await grantTokens(hearth, game, player.token, 'openid'));
      await expect(verifyIdToken(hearth, after, game.id)).resolves.toMatchObject({
        protectedHeader: { kid: newKid },
      });
    });

    it('§10.1.1 the retired key leaves the JWKS once every token it may have signed has expired', async () => {
      const { hearth, clock } = await start();
      const player = await createPlayer(hearth);
      const game = await createGame(hearth);
      const before = idTokenOf(await grantTokens(hearth, game, player.token, 'openid'));
      const oldKid = decodeProtectedHeader(before).kid;
      clock.advance(60_000);
      const rotatedAt = clock.now();
      const newKid = await hearth.services.keys.rotate();

      // Tokens live 7 days; a node may sign with the retired key for up to a minute after the rotation.
      clock.set(rotatedAt + 7 * DAY_MS + SIGNING_KEY_CACHE_MS - 1);
      expect(await keyIds(hearth)).toEqual([newKid, oldKid]);
      clock.set(rotatedAt + 7 * DAY_MS + SIGNING_KEY_CACHE_MS);
      expect(await keyIds(hearth)).toEqual([newKid]);
      // The new key signs on, and is the only one a relying party needs.
      const later = idTokenOf(await grantTokens(hearth, game, player.token, 'openid'));
      expect(decodeProtectedHeader(later).kid).toBe(newKid);
    });

    it('§10.1.1 a key another node still signs with stays published while the tokens it signs live', async () => {
      const directory = mkdtempSync(join(tmpdir(), 'hearth-oidc-'));
      directories.push(directory);
      const databaseUrl = `sqlite:${join(directory, 'hearth.sqlite')}`;
      const clock = new ManualClock(T0);
      const { hearth: signer } = await start({ databaseUrl }, clock);
      const { hearth: operator } = await start({ databaseUrl }, clock);
      const player = await createPlayer(signer);
      const game = await createGame(signer);
      const oldKid = decodeProtectedHeader(
        idTokenOf(await grantTokens(signer, game, player.token, 'openid')),
      ).kid;

      clock.advance(1_000);
      const rotatedAt = clock.now();
      const newKid = await operator.services.keys.rotate();
      // The signer has not looked for a newer key yet (it caches the active one for a while).
      clock.advance(30_000);
      const late = idTokenOf(await grantTokens(signer, game, player.token, 'openid'));
      expect(decodeProtectedHeader(late).kid).toBe(oldKid);

      // 7 days after the rotation the late token is still valid for 30 s: its key must still be published.
      clock.set(rotatedAt + 7 * DAY_MS);
      expect(await keyIds(operator)).toEqual([newKid, oldKid]);
      const jwks = createRemoteJWKSet(new URL((await discover(operator)).jwks_uri));
      await expect(
        jwtVerify(late, jwks, { issuer: signer.url, audience: game.id, currentDate: new Date(clock.now()) }),
      ).resolves.toMatchObject({ protectedHeader: { kid: oldKid } });
    });

    it('§10.1 signing keys survive a restart: a token from the first server verifies against the second', async () => {
      const directory = mkdtempSync(join(tmpdir(), 'hearth-oidc-'));
      directories.push(directory);
      const databaseUrl = `sqlite:${join(directory, 'hearth.sqlite')}`;

      const first = await startHearth({ databaseUrl });
      opened.push(first);
      const player = await createPlayer(first);
      const game = await createGame(first);
      const idToken = idTokenOf(await grantTokens(first, game, player.token, 'openid identify'));
      const firstIssuer = (await discover(first)).issuer;
      const kid = decodeProtectedHeader(idToken).kid;
      opened.splice(opened.indexOf(first), 1);
      await first.close();

      const second = await startHearth({ databaseUrl });
      opened.push(second);
      expect(await keyIds(second)).toEqual([kid]);
      const { payload } = await verifyIdToken(second, idToken, game.id, firstIssuer);
      expect(payload.sub).toBe(player.user.id);
      // The same key signs on after the restart.
      const again = idTokenOf(await grantTokens(second, game, player.token, 'openid'));
      expect(decodeProtectedHeader(again).kid).toBe(kid);
    });
  });

  describe('§5.3 UserInfo endpoint and GET /oauth2/@me', () => {
    async function linked(scope: string) {
      const { hearth, clock } = await start();
      const player = await createPlayer(hearth);
      const game = await createGame(hearth);
      clock.advance(5_000);
      const tokens = await grantTokens(hearth, game, player.token, scope);
      return { hearth, player, game, tokens, issuedAt: T0 + 5_000 };
    }

    function userinfo(hearth: TestHearth, accessToken: string) {
      return hearth.api('/oauth2/userinfo', { auth: `Bearer ${accessToken}` });
    }

    it('§5.3.2 openid identify: sub and the profile claims; a claim with no value is omitted, not null', async () => {
      const { hearth, player, tokens } = await linked('openid identify');
      const response = await userinfo(hearth, tokens.access_token);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await response.json()).toEqual({
        sub: player.user.id,
        preferred_username: player.user.username,
        locale: 'en-US',
      });
    });

    it('§5.3.2 a claim with no value is left out, not null; nickname appears once the user has a global name', async () => {
      const { hearth, player, tokens } = await linked('openid identify');
      await hearth.services.accounts.modifyUser(player.user.id, { global_name: 'Nick' });
      const response = await userinfo(hearth, tokens.access_token);
      expect(await response.json()).toEqual({
        sub: player.user.id,
        preferred_username: player.user.username,
        nickname: 'Nick',
        locale: 'en-US',
      });
    });

    it('§5.4 email and email_verified only with the email scope', async () => {
      const { hearth, player, tokens } = await linked('openid identify email');
      const response = await userinfo(hearth, tokens.access_token);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        sub: player.user.id,
        email: `${player.user.username}@example.com`,
        email_verified: true,
        preferred_username: player.user.username,
        locale: 'en-US',
      });
    });

    it('§5.3.2 openid alone: sub only', async () => {
      const { hearth, player, tokens } = await linked('openid');
      const response = await userinfo(hearth, tokens.access_token);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ sub: player.user.id });
    });

    it('§5.3.1 a token without openid is refused: 403 with code 50026', async () => {
      const { hearth, tokens } = await linked('identify email');
      const response = await userinfo(hearth, tokens.access_token);
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ code: 50026, message: 'Missing required OAuth2 scope' });
    });

    it('§C.8 GET /oauth2/@me answers application, scopes, expires (ISO 8601) and user with identify', async () => {
      const { hearth, player, game, tokens, issuedAt } = await linked('openid identify');
      const application = await hearth.services.applications.requireApplication(game.id);
      const response = await hearth.api('/oauth2/@me', { auth: `Bearer ${tokens.access_token}` });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { expires: string };
      expect(body.expires).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(body).toEqual({
        application: {
          id: game.id,
          name: application.name,
          icon: null,
          description: application.description,
          type: null,
          bot_public: true,
          bot_require_code_grant: false,
          verify_key: application.verifyKey,
          flags: 0,
          flags_new: '0',
        },
        scopes: ['openid', 'identify'],
        expires: new Date(issuedAt + TOKEN_TTL_SECONDS * 1000).toISOString(),
        user: {
          id: player.user.id,
          username: player.user.username,
          discriminator: '0',
          global_name: null,
          avatar: null,
          public_flags: 0,
          flags: 0,
          banner: null,
          accent_color: null,
          avatar_decoration_data: null,
          collectibles: null,
          primary_guild: null,
        },
      });
    });

    it('§C.8 GET /oauth2/@me leaves out the user without identify', async () => {
      const { hearth, tokens } = await linked('openid');
      const response = await hearth.api('/oauth2/@me', { auth: `Bearer ${tokens.access_token}` });
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['application', 'expires', 'scopes']);
      expect(body['scopes']).toEqual(['openid']);
    });

    it('RFC 7009 §2.2 a revoked token is then 401 on UserInfo and on /oauth2/@me', async () => {
      const { hearth, game, tokens } = await linked('openid identify');
      expect((await userinfo(hearth, tokens.access_token)).status).toBe(200);

      const revoked = await tokenRequest(
        hearth,
        { token: tokens.access_token, token_type_hint: 'access_token' },
        { basic: [game.id, game.clientSecret], path: '/oauth2/token/revoke' },
      );
      expect(revoked.status).toBe(200);
      expect(await revoked.json()).toEqual({});

      const info = await userinfo(hearth, tokens.access_token);
      expect(info.status).toBe(401);
      expect(info.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      expect(await info.json()).toEqual(UNAUTHORIZED);
      const me = await hearth.api('/oauth2/@me', { auth: `Bearer ${tokens.access_token}` });
      expect(me.status).toBe(401);
      expect(await me.json()).toEqual(UNAUTHORIZED);
    });
  });
});
