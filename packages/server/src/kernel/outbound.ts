import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import {
  type ClientRequest,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';

/**
 * The one policy for every URL Hearth itself calls (event webhooks, lobby overrides, identity providers):
 * what may be saved, where a request may connect, and how much of an answer is read. SSRF lives or dies here.
 */
export interface OutboundPolicy {
  /**
   * Development only (`--allow-loopback-urls`): loopback destinations (localhost, 127.0.0.0/8, ::1) are
   * allowed, and `http:` where the caller allows it. Private, link-local, metadata and unspecified
   * addresses stay refused.
   */
  allowLoopback: boolean;
  /** PEM of an extra certificate authority trusted besides the system roots. */
  extraCa: string | undefined;
}

export interface UrlRules {
  /** `http:` besides `https:`; honoured only with the development switch. */
  http?: boolean;
  /** A query string is allowed (a key-set URL may carry one; an issuer may not). */
  query?: boolean;
}

/** Why a URL is refused before any request, or undefined when it may be saved. */
export function outboundUrlProblem(
  raw: string,
  policy: OutboundPolicy,
  rules: UrlRules = {},
): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a URL';
  }
  const http = rules.http === true && policy.allowLoopback;
  if (url.protocol !== 'https:' && !(http && url.protocol === 'http:'))
    return `scheme ${url.protocol} refused`;
  if (url.username !== '' || url.password !== '') return 'credentials in the URL';
  if (url.hash !== '' || raw.includes('#')) return 'fragment in the URL';
  if (rules.query !== true && (url.search !== '' || raw.includes('?'))) return 'query in the URL';
  const host = bareHost(url.hostname);
  if (host === '') return 'no host';
  // A name is judged by the addresses it resolves to, when a request is made (`localhost` included).
  return isIP(host) !== 0 ? addressProblem(host, policy) : undefined;
}

/** Why an address may not be connected to, or undefined when it may. */
export function addressProblem(address: string, policy: OutboundPolicy): string | undefined {
  const family = isIP(address);
  if (family === 0) return `not an address: ${address}`;
  const v4 = family === 4 ? address : embeddedIpv4(address);
  const [checked, type] = v4 === undefined ? [address, 'ipv6' as const] : [v4, 'ipv4' as const];
  if (LOOPBACK.check(checked, type)) return policy.allowLoopback ? undefined : `loopback address ${address}`;
  if (FORBIDDEN.check(checked, type)) return `non-public address ${address}`;
  return undefined;
}

/** What an outbound exchange answered; `error` when it never completed (refused, timed out, too large). */
export type OutboundAnswer =
  | { status: number; body: Buffer; error: null; headers: IncomingHttpHeaders }
  | { status: null; body: null; error: string };

export interface OutboundRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';
  headers?: Record<string, string | number>;
  body?: string | Buffer;
  timeoutMs: number;
  /** Bytes of the answer read at most; a longer answer is no answer. */
  maxBytes: number;
  rules?: UrlRules;
}

/**
 * One exchange under the policy: the URL checked again, the host resolved now and every address it
 * resolves to checked (a name that pointed outside at save time may point inside today), redirects never
 * followed (a 3xx is answered as it is), the answer bounded in bytes and time.
 */
export function outboundRequest(
  raw: string,
  policy: OutboundPolicy,
  options: OutboundRequest,
): Promise<OutboundAnswer> {
  const problem = outboundUrlProblem(raw, policy, options.rules);
  if (problem !== undefined) return Promise.resolve({ status: null, body: null, error: problem });
  const url = new URL(raw);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    let req: ClientRequest | undefined;
    const done = (answer: OutboundAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const fail = (error: string) => done({ status: null, body: null, error });
    // The whole exchange, not only the idle gaps, is bounded: a slow trickle cannot hold a worker.
    const timer = setTimeout(() => {
      req?.destroy();
      fail(`no answer within ${options.timeoutMs} ms`);
    }, options.timeoutMs);
    const attempt = (fresh: boolean) => {
      try {
        req = send(url, {
          method: options.method,
          headers: options.headers ?? {},
          lookup: checkedLookup(policy),
          ...(url.protocol === 'https:' && policy.extraCa
            ? { ca: [...rootCertificates, policy.extraCa] }
            : {}),
          ...(fresh ? { agent: false } : {}),
        });
      } catch (error) {
        fail(describe(error));
        return;
      }
      const current = req;
      let answered = false;
      current.on('response', (response: IncomingMessage) => {
        answered = true;
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            current.destroy();
            fail(`answer larger than ${options.maxBytes} bytes`);
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () =>
          done({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks),
            error: null,
            headers: response.headers,
          }),
        );
        response.on('error', (error) => fail(describe(error)));
      });
      current.on('error', (error) => {
        // A kept-alive connection the server closed as it was handed out (its close not yet read: a busy
        // event loop) never carried the request: once more, on a connection of its own.
        if (!fresh && !answered && !settled && current.reusedSocket && isStaleSocket(error)) attempt(true);
        else fail(describe(error));
      });
      current.end(options.body);
    };
    attempt(false);
  });
}

function isStaleSocket(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/** A resolver that refuses the whole name when any address it resolves to is refused. */
function checkedLookup(policy: OutboundPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) {
        callback(error, '', 0);
        return;
      }
      const refused = addresses.map((a) => addressProblem(a.address, policy)).find((p) => p !== undefined);
      if (refused !== undefined || addresses.length === 0) {
        const denied = Object.assign(new Error(refused ?? `${hostname} has no address`), {
          code: 'EADDRREFUSED',
        });
        callback(denied, '', 0);
        return;
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: string }).code;
  return code === 'EADDRREFUSED' ? error.message : (code ?? error.message);
}

function bareHost(hostname: string): string {
  const host = hostname.toLowerCase();
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host.replace(/\.$/, '');
}

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible or NAT64 (64:ff9b::/96) one. */
function embeddedIpv4(address: string): string | undefined {
  const groups = expandIpv6(address);
  if (groups === undefined) return undefined;
  const prefixZero = groups.slice(0, 5).every((g) => g === 0);
  const mapped = prefixZero && (groups[5] === 0xffff || (groups[5] === 0 && (groups[6] ?? 0) !== 0));
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0);
  if (!mapped && !nat64) return undefined;
  const high = groups[6] ?? 0;
  const low = groups[7] ?? 0;
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part read as two groups). */
function expandIpv6(address: string): number[] | undefined {
  let text = address.toLowerCase().split('%')[0] ?? '';
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...Array<string>(Math.max(0, zeros)).fill('0'), ...right].map((g) =>
    Number.parseInt(g, 16),
  );
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** RFC 6890 special-purpose ranges: nothing here is a public receiver (169.254.169.254 is cloud metadata). */
const FORBIDDEN = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  FORBIDDEN.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::', 96],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  FORBIDDEN.addSubnet(net, prefix, 'ipv6');
}
