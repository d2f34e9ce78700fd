import type { Bus } from '@hearth/server';
import { expect, vi } from 'vitest';
import type { ApiInit, TestHearth } from '../../../../test-support/hearth.js';

type DeliveredEvent = Parameters<Parameters<Bus['subscribe']>[0]>[0];

/** The guild-core suites' requests: status and JSON body, with no 5xx ever. */
export async function call(
  hearth: TestHearth,
  path: string,
  init: ApiInit = {},
): Promise<{ status: number; body: unknown }> {
  const response = await hearth.api(path, init);
  expect(response.status).toBeLessThan(500);
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

export const invalidForm = (errors: unknown) => ({ code: 50035, message: 'Invalid Form Body', errors });
export const MISSING_PERMISSIONS = { code: 50013, message: 'Missing Permissions' };
export const MISSING_ACCESS = { code: 50001, message: 'Missing Access' };
export const UNKNOWN_GUILD = { code: 10004, message: 'Unknown Guild' };
export const UNKNOWN_ROLE = { code: 10011, message: 'Unknown Role' };
export const UNAUTHORIZED = { code: 0, message: '401: Unauthorized' };

/** A 1×1 PNG as a data URI. */
export const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** Records the bus events of one guild from now on. */
export function recordEvents(hearth: TestHearth, guildId: string) {
  const events: DeliveredEvent[] = [];
  const stop = hearth.bus.subscribe((event) => {
    if (event.audience?.guildId === guildId) events.push(event);
  });
  return {
    events,
    stop,
    /** Waits until an event of `type` arrived; answers its data. */
    async next(type: string): Promise<Record<string, unknown>> {
      return vi.waitFor(() => {
        const found = events.find((event) => event.type === type);
        if (!found) throw new Error(`no ${type} yet`);
        return found.data;
      });
    },
  };
}
