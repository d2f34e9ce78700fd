import { expect } from 'vitest';
import { seedTestChannel } from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import type { DeliveredEvent } from '../../src/bus/bus.js';

export type Json = Record<string, unknown>;

/** One HTTP answer: status, the parsed object body ({} when empty) or its items when it is an array. */
export interface Answer {
  status: number;
  body: Json;
  items: Json[];
  empty: boolean;
}

export async function call(
  hearth: TestHearth,
  auth: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await hearth.api(path, {
    method,
    headers,
    ...(auth === undefined ? {} : { auth }),
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  expect(response.status, text).toBeLessThan(500);
  const parsed: unknown = text === '' ? {} : JSON.parse(text);
  return {
    status: response.status,
    body: Array.isArray(parsed) ? {} : (parsed as Json),
    items: Array.isArray(parsed) ? (parsed as Json[]) : [],
    empty: text === '',
  };
}

/** Asserts the platform's error body exactly: status, code, message (and the errors tree when given). */
export function expectError(answer: Answer, status: number, code: number, message: string, errors?: unknown) {
  expect(answer.status).toBe(status);
  expect(answer.body.code).toBe(code);
  expect(answer.body.message).toBe(message);
  if (errors !== undefined) expect(answer.body.errors).toEqual(errors);
}

/** Every bus event published while recording, for asserting what a change sent. */
export function recordEvents(hearth: TestHearth) {
  const seen: DeliveredEvent[] = [];
  const stop = hearth.bus.subscribe((event) => seen.push(event));
  return {
    seen,
    stop,
    of(type: string) {
      return seen.filter((event) => event.type === type);
    },
    clear() {
      seen.length = 0;
    },
  };
}

/** A voice or text channel row for voice-state setup (channel routes belong to another part). */
export function insertChannel(
  hearth: TestHearth,
  guildId: string,
  type: number,
  options: { userLimit?: number } = {},
): Promise<string> {
  return seedTestChannel(hearth, guildId, { type, ...options });
}

export const UNKNOWN_ID = '999999999999999999';
