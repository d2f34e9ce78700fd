import { hash, randomBytes, randomFillSync, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/**
 * Random bytes for tokens, drawn from a pool filled 4 KiB at a time: each call to the system's generator
 * costs more than the few bytes a secret takes (an exchange draws two). Each byte is handed out once, and
 * zeroed in the pool once handed out.
 */
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;

function randomString(bytes: number): string {
  if (bytes > POOL_SIZE) return randomBytes(bytes).toString('base64url');
  if (poolOffset + bytes > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const end = poolOffset + bytes;
  const text = pool.toString('base64url', poolOffset, end);
  pool.fill(0, poolOffset, end);
  poolOffset = end;
  return text;
}

/**
 * A bearer secret shaped like the platform's tokens: `base64url(owner id).base64url(time).random`. Clients
 * that log tokens mask everything after the second dot, so the random part never reaches their logs.
 */
export function generateToken(ownerId: string, nowMs: number): string {
  const owner = Buffer.from(ownerId).toString('base64url');
  const time = Buffer.from(Math.floor(nowMs / 1000).toString()).toString('base64url');
  return `${owner}.${time}.${randomString(27)}`;
}

/** A random secret with no structure (client secrets, authorization codes). */
export function generateSecret(bytes = 24): string {
  return randomString(bytes);
}

/** Tokens are stored only as this hash; a lookup hashes the presented token. */
export function hashToken(token: string): string {
  // One-shot: no Hash object per call (several per token request).
  return hash('sha256', token, 'base64url');
}

/** A presented token's hash, when the caller made it already (a connection presenting the same one again). */
export interface TokenLookup {
  tokenHash?: string;
}

export function secretsEqual(a: string, b: string): boolean {
  const left = Buffer.from(hashToken(a));
  const right = Buffer.from(hashToken(b));
  return timingSafeEqual(left, right);
}

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 } as const;

/** scrypt with a per-password salt, encoded with its parameters so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT.keylen, { ...SCRYPT, maxmem: 64 * 1024 * 1024 });
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = encoded.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 * 1024 * 1024,
  });
  return timingSafeEqual(actual, expected);
}
