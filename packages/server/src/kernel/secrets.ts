import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/**
 * A bearer secret shaped like the platform's tokens: `base64url(owner id).base64url(time).random`. Clients
 * that log tokens mask everything after the second dot, so the random part never reaches their logs.
 */
export function generateToken(ownerId: string, nowMs: number): string {
  const owner = Buffer.from(ownerId).toString('base64url');
  const time = Buffer.from(Math.floor(nowMs / 1000).toString()).toString('base64url');
  return `${owner}.${time}.${randomBytes(27).toString('base64url')}`;
}

/** A random secret with no structure (client secrets, authorization codes). */
export function generateSecret(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

/** Tokens are stored only as this hash; a lookup hashes the presented token. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
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
