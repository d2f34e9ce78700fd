import type { Clock } from '@hearth/server';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';

export const ADMIN_TOKEN = 'emulator-operator-token-0123456789abcdef';

export interface EmulatorHearth extends TestHearth {
  /** A call of the admin API with the operator token: `admin('POST', '/clock', { advance: '30d' })`. */
  admin(method: string, path: string, body?: unknown): Promise<Response>;
  /** The same, answering the parsed body and failing on any status but 2xx. */
  adminJson<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
}

/** A test server in emulator mode with an operator token. */
export async function startEmulator(clock?: Clock, overrides: Parameters<typeof startHearth>[0] = {}) {
  const hearth = await startHearth({ emulator: true, adminToken: ADMIN_TOKEN, ...overrides }, clock);
  const address = hearth.http.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`http://127.0.0.1:${port}/_hearth${path}`, {
      method,
      headers: {
        authorization: `Admin ${ADMIN_TOKEN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const adminJson = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await admin(method, path, body);
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  };
  return Object.assign(hearth, { admin, adminJson }) as EmulatorHearth;
}
