import { createPrivateKey, hash, type JsonWebKey, type KeyObject, randomBytes, sign } from 'node:crypto';
import { ACCESS_TOKEN_TTL_SECONDS, ID_TOKEN_SIGNING_ALG } from '@hearth/protocol';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload } from 'jose';
import type { Clock } from '../../kernel/clock.js';
import type { Storage } from '../../storage/database.js';

const ID_TOKEN_TTL_MS = ACCESS_TOKEN_TTL_SECONDS * 1000;
/** How long a node signs with the key it loaded before looking for a newer one (another node may rotate). */
const ACTIVE_KEY_CACHE_MS = 60_000;

export type IdTokenSigner = (
  claims: JWTPayload & { iss: string; sub: string; aud: string[] },
) => Promise<string>;

/** The digest node:crypto signs with for each JWS algorithm Hearth signs ID tokens with (RFC 7518 §3.3). */
const DIGESTS = { RS256: 'sha256' } as const satisfies Record<typeof ID_TOKEN_SIGNING_ALG, string>;

/** The active key, with its JWS protected header already encoded (RFC 7515 §7.1): it never changes. */
type SigningKey = { kid: string; key: KeyObject; encodedHeader: string };

/**
 * The ID-token signing keys (OIDC Core §10.1): persisted so tokens survive restarts, rotated by the
 * operator, and a retired key stays in the JWKS until every token it signed has expired.
 */
export class SigningKeys {
  readonly #storage: Storage;
  readonly #clock: Clock;
  #active: { key: SigningKey; loadedAt: number } | undefined;

  constructor(deps: { storage: Storage; clock: Clock }) {
    this.#storage = deps.storage;
    this.#clock = deps.clock;
  }

  /** Makes a first key if there is none. */
  async ensure(): Promise<void> {
    const active = await this.#storage.db
      .selectFrom('signing_keys')
      .select('kid')
      .where('retired_at', 'is', null)
      .executeTakeFirst();
    if (!active) await this.rotate();
  }

  /** A new key signs from now on; the previous one is retired but still published. Answers the new kid. */
  async rotate(): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair(ID_TOKEN_SIGNING_ALG, { extractable: true });
    const kid = randomBytes(12).toString('base64url');
    const now = this.#clock.now();
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ID_TOKEN_SIGNING_ALG, use: 'sig' };
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: ID_TOKEN_SIGNING_ALG };
    await this.#storage.transaction(async (tx) => {
      await tx.updateTable('signing_keys').set({ retired_at: now }).where('retired_at', 'is', null).execute();
      await tx
        .insertInto('signing_keys')
        .values({
          kid,
          alg: ID_TOKEN_SIGNING_ALG,
          private_jwk: JSON.stringify(privateJwk),
          public_jwk: JSON.stringify(publicJwk),
          created_at: now,
          retired_at: null,
        })
        .execute();
    });
    this.#active = undefined;
    return kid;
  }

  /** The published key set: the active key and every retired key whose tokens may still be valid. */
  async jwks(): Promise<{ keys: JWK[] }> {
    // Another node may sign with a retired key until its cache expires (ACTIVE_KEY_CACHE_MS): publish it
    // that much longer, so every token it signs verifies for its whole life (OIDC Core §10.1.1).
    const retainedSince = this.#clock.now() - ID_TOKEN_TTL_MS - ACTIVE_KEY_CACHE_MS;
    const rows = await this.#storage.db
      .selectFrom('signing_keys')
      .select(['public_jwk'])
      .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', retainedSince)]))
      .orderBy('created_at', 'desc')
      .execute();
    return { keys: rows.map((row) => JSON.parse(row.public_jwk) as JWK) };
  }

  /**
   * A signer bound to the active key. Get it before opening a transaction: loading the key reads the
   * database, and signing itself then touches nothing but memory. `exp` is the access token's.
   */
  async signer(): Promise<IdTokenSigner> {
    const { key, encodedHeader } = await this.#activeKey();
    return async (claims) => {
      const iat = Math.floor(this.#clock.now() / 1000);
      const payload = JSON.stringify({ ...claims, iat, exp: iat + ACCESS_TOKEN_TTL_SECONDS });
      const input = `${encodedHeader}.${Buffer.from(payload).toString('base64url')}`;
      return `${input}.${(await signOnPool(input, key)).toString('base64url')}`;
    };
  }

  async #activeKey(): Promise<SigningKey> {
    const now = this.#clock.now();
    if (this.#active && now - this.#active.loadedAt < ACTIVE_KEY_CACHE_MS) return this.#active.key;
    const row = await this.#storage.db
      .selectFrom('signing_keys')
      .select(['kid', 'private_jwk'])
      .where('retired_at', 'is', null)
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    if (!row) throw new Error('no active signing key: SigningKeys.ensure() was not called');
    const header = JSON.stringify({ alg: ID_TOKEN_SIGNING_ALG, kid: row.kid, typ: 'JWT' });
    const key = {
      kid: row.kid,
      key: createPrivateKey({ key: JSON.parse(row.private_jwk) as JsonWebKey, format: 'jwk' }),
      encodedHeader: Buffer.from(header).toString('base64url'),
    };
    this.#active = { key, loadedAt: now };
    return key;
  }
}

/**
 * The JWS signature of `input` (RFC 7515 §5.1), computed on libuv's pool as WebCrypto's would be, without
 * WebCrypto's per-call algorithm normalization and conversions on the request thread.
 */
function signOnPool(input: string, key: KeyObject): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    sign(DIGESTS[ID_TOKEN_SIGNING_ALG], Buffer.from(input), key, (error, signature) =>
      error ? reject(error) : resolve(signature),
    );
  });
}

/** OIDC Core §3.1.3.6: the left half of the SHA-256 of the access token, base64url. */
export function accessTokenHash(accessToken: string): string {
  const digest = hash('sha256', Buffer.from(accessToken, 'ascii'), 'buffer');
  return digest.subarray(0, digest.length / 2).toString('base64url');
}
