import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createThreadRoom, post, startThread, type ThreadRoom } from './support.js';

/**
 * Bad input never reaches a 500 (issue 21), on real threads: the repository-wide sweep knows no thread,
 * so every thread route here gets malformed bodies and queries against a live thread, a live forum and a
 * live message, and answers a 4xx with the platform's error body.
 */

let hearth: TestHearth;
let room: ThreadRoom;
let thread: string;
let secret: string;
let post_: string;
let message: string;

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  room = await createThreadRoom(hearth);
  thread = await startThread(hearth, room.textId, room.member.token);
  secret = await startThread(hearth, room.textId, room.member.token, { type: 12 });
  message = (await post(hearth, room.textId, room.member.token, { content: 'm' })).body.id;
  const forum = await hearth.api(`/channels/${room.forumId}/threads`, {
    method: 'POST',
    auth: room.member.token,
    body: { name: 'p', message: { content: 'm' } },
  });
  post_ = ((await forum.json()) as { id: string }).id;
});
afterAll(() => hearth.close());

const BODIES: unknown[] = [
  undefined,
  null,
  [],
  'text',
  12,
  { name: 5 },
  { name: '' },
  { name: 'x'.repeat(10_000) },
  { name: 'x', auto_archive_duration: 'x', type: 'x', invitable: 'x', rate_limit_per_user: -1 },
  { name: 'x', type: 1e30, auto_archive_duration: 1e30, rate_limit_per_user: 1e30 },
  { name: 'x', applied_tags: {}, message: 'x' },
  { name: 'x', applied_tags: ['x', null, 5], message: { content: 5, embeds: 'x', flags: -1 } },
  { name: 'x', message: { content: 'x'.repeat(5000), components: [{ type: 99 }], attachments: [{}] } },
  { name: 'x', message: { message_reference: { message_id: 'x' }, allowed_mentions: { parse: 'x' } } },
  { archived: 'yes', locked: 1, invitable: [], flags: -1, applied_tags: [[]] },
  { archived: false, locked: false, flags: 2 ** 53, auto_archive_duration: 7 },
  { name: null, archived: null, locked: null, applied_tags: null, rate_limit_per_user: null },
];

const QUERIES = [
  '',
  '?limit=abc',
  '?limit=0',
  '?limit=1e9',
  '?before=x',
  '?before=-1',
  '?after=-1',
  '?with_member=maybe',
];

async function expectClientError(method: string, path: string, body: unknown): Promise<void> {
  const response = await hearth.api(path, { method, auth: room.member.token, body });
  const text = await response.text();
  expect(response.status, `${method} ${path} ${JSON.stringify(body)}: ${text}`).toBeLessThan(500);
  if (response.status >= 400) {
    const parsed = JSON.parse(text) as { code?: unknown; message?: unknown };
    expect(typeof parsed.code, text).toBe('number');
    expect(typeof parsed.message, text).toBe('string');
  }
}

describe('no 500s: malformed requests to every thread route on live threads', () => {
  it('bodies of the create and modify routes', async () => {
    const routes: Array<[string, string]> = [
      ['POST', `/channels/${room.textId}/threads`],
      ['POST', `/channels/${room.forumId}/threads`],
      ['POST', `/channels/${room.announcementId}/threads`],
      ['POST', `/channels/${room.textId}/messages/${message}/threads`],
      ['PATCH', `/channels/${thread}`],
      ['PATCH', `/channels/${secret}`],
      ['PATCH', `/channels/${post_}`],
      ['POST', `/channels/${post_}/messages`],
    ];
    for (const [method, path] of routes)
      for (const body of BODIES) await expectClientError(method, path, body);
  });

  it('queries and ids of the member and list routes', async () => {
    const paths = [
      `/channels/${thread}/thread-members`,
      `/channels/${thread}/thread-members/${room.member.id}`,
      `/channels/${room.textId}/threads/archived/public`,
      `/channels/${room.textId}/threads/archived/private`,
      `/channels/${room.textId}/users/@me/threads/archived/private`,
      `/guilds/${room.guild.id}/threads/active`,
    ];
    for (const path of paths)
      for (const query of QUERIES) await expectClientError('GET', `${path}${query}`, undefined);
    for (const id of ['x', '-1', '99999999999999999999999', '1234567890123456789'])
      for (const method of ['PUT', 'DELETE', 'GET']) {
        await expectClientError(method, `/channels/${thread}/thread-members/${id}`, undefined);
        await expectClientError(method, `/channels/${id}/thread-members/@me`, undefined);
      }
  });
});
