import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The user session token (the same sessions as POST /auth/login and the consent page). */
export const SESSION_COOKIE = 'hearth_portal';
/** Before sign-in: the login form's token (double submit), so no other site can sign a browser in. */
export const LOGIN_COOKIE = 'hearth_portal_login';
const COOKIE_PATH = '/developers';

/** The cookies of a request; a malformed pair is skipped, never thrown on. */
export function readCookies(request: FastifyRequest): Map<string, string> {
  const cookies = new Map<string, string>();
  const header = request.headers.cookie;
  if (typeof header !== 'string') return cookies;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const name = pair.slice(0, at).trim();
    let value = pair.slice(at + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      continue;
    }
    if (!cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

/** HttpOnly, SameSite=Lax, limited to the portal, and Secure when the portal is served over https. */
export function setCookie(
  reply: FastifyReply,
  name: string,
  value: string,
  secure: boolean,
  maxAgeSeconds?: number,
): void {
  const parts = [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${COOKIE_PATH}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(secure ? ['Secure'] : []),
    ...(maxAgeSeconds === undefined ? [] : [`Max-Age=${maxAgeSeconds}`]),
  ];
  const previous = reply.getHeader('set-cookie');
  const list = previous === undefined ? [] : [previous].flat().map(String);
  reply.header('set-cookie', [...list, parts.join('; ')]);
}

export function clearCookie(reply: FastifyReply, name: string, secure: boolean): void {
  setCookie(reply, name, '', secure, 0);
}

/**
 * The session's form token: an HMAC keyed by the session token, so it is fixed for the session, differs
 * between sessions, and no page can compute it without the HttpOnly cookie.
 */
export function csrfTokenFor(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('hearth-portal-csrf').digest('base64url');
}

export function newLoginToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Constant-time comparison of a submitted form token with the expected one. */
export function sameToken(submitted: string | undefined, expected: string | undefined): boolean {
  if (submitted === undefined || expected === undefined || expected.length === 0) return false;
  const a = Buffer.from(submitted);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
