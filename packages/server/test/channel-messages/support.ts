import { PermissionFlags } from '@hearth/protocol';
import type { APIMessage } from 'discord-api-types/v10';
import { expect } from 'vitest';
import {
  addTestMember,
  createTestGuild,
  seedTestChannel,
  setEveryonePermissions,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import type { ApiInit, TestHearth } from '../../../../test-support/hearth.js';

/** The channel-message suites' requests: status and JSON body, never a 5xx. */
export async function call<T = APIMessage>(
  hearth: TestHearth,
  path: string,
  init: ApiInit = {},
): Promise<{ status: number; body: T }> {
  const response = await hearth.api(path, init);
  expect(response.status).toBeLessThan(500);
  const text = await response.text();
  return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

export const invalidForm = (errors: unknown) => ({ code: 50035, message: 'Invalid Form Body', errors });
export const MISSING_PERMISSIONS = { code: 50013, message: 'Missing Permissions' };
export const MISSING_ACCESS = { code: 50001, message: 'Missing Access' };
export const UNKNOWN_MESSAGE = { code: 10008, message: 'Unknown Message' };
export const UNKNOWN_CHANNEL = { code: 10003, message: 'Unknown Channel' };
export const EMPTY_MESSAGE = { code: 50006, message: 'Cannot send an empty message' };

const { ViewChannel, SendMessages, ReadMessageHistory, EmbedLinks, AddReactions, AttachFiles } =
  PermissionFlags;

/** What @everyone holds in the test guilds: read and write, nothing more. */
export const MEMBER_PERMISSIONS =
  ViewChannel | SendMessages | ReadMessageHistory | EmbedLinks | AddReactions | AttachFiles;

export interface Room {
  guild: TestGuild;
  owner: { id: string; token: string };
  member: { id: string; token: string };
  channelId: string;
}

/** A guild whose @everyone can read and write, a member, and a text channel. */
export async function createRoom(
  hearth: TestHearth,
  channel: Parameters<typeof seedTestChannel>[2] = {},
): Promise<Room> {
  const guild = await createTestGuild(hearth);
  await setEveryonePermissions(hearth, guild, MEMBER_PERMISSIONS);
  const member = await addTestMember(hearth, guild);
  const channelId = await seedTestChannel(hearth, guild.id, channel);
  return { guild, owner: guild.owner, member, channelId };
}

/** Posts a message as `token`; answers status and body. */
export function post(hearth: TestHearth, channelId: string, token: string, body: unknown) {
  return call(hearth, `/channels/${channelId}/messages`, { method: 'POST', auth: token, body });
}
