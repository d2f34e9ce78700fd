import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  call,
  createThreadRoom,
  patchThread,
  post,
  THREAD_ARCHIVED,
  THREAD_LOCKED,
  type ThreadRoom,
  type User,
} from './support.js';

/**
 * Seed, States: "Locked threads". A thread can be locked without being archived; without MANAGE_THREADS
 * nobody creates or edits messages or changes its title or tags there; deleting messages and changing
 * reactions stay allowed only while it is not archived; MANAGE_THREADS holders are unaffected; locked and
 * archived behaves as archived (writes refused until unarchived; a message unarchives an unlocked one).
 * Every cell starts from a fresh forum post by the actor, with one message and one reaction of theirs.
 */

const clock = new ManualClock(Date.parse('2026-03-02T10:00:00Z'));
const THUMBS = encodeURIComponent('👍');
const FIRE = encodeURIComponent('🔥');

let hearth: TestHearth;
let room: ThreadRoom;
beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
  room = await createThreadRoom(hearth);
});
afterAll(() => hearth.close());

type Action =
  | 'create message'
  | 'edit message'
  | 'delete message'
  | 'add reaction'
  | 'remove reaction'
  | 'rename thread'
  | 'change tags';

interface Cell {
  thread: string;
  message: string;
  actor: User;
}

const ACTIONS: Record<Action, (cell: Cell) => Promise<{ status: number; body: unknown }>> = {
  'create message': ({ thread, actor }) => post(hearth, thread, actor.token, { content: 'new' }),
  'edit message': ({ thread, message, actor }) =>
    call(hearth, `/channels/${thread}/messages/${message}`, {
      method: 'PATCH',
      auth: actor.token,
      body: { content: 'edited' },
    }),
  'delete message': ({ thread, message, actor }) =>
    call(hearth, `/channels/${thread}/messages/${message}`, { method: 'DELETE', auth: actor.token }),
  'add reaction': ({ thread, message, actor }) =>
    call(hearth, `/channels/${thread}/messages/${message}/reactions/${FIRE}/@me`, {
      method: 'PUT',
      auth: actor.token,
    }),
  'remove reaction': ({ thread, message, actor }) =>
    call(hearth, `/channels/${thread}/messages/${message}/reactions/${THUMBS}/@me`, {
      method: 'DELETE',
      auth: actor.token,
    }),
  'rename thread': ({ thread, actor }) => patchThread(hearth, thread, actor.token, { name: 'renamed' }),
  'change tags': ({ thread, actor }) => patchThread(hearth, thread, actor.token, { applied_tags: [] }),
};

const OK: Record<Action, number> = {
  'create message': 200,
  'edit message': 200,
  'delete message': 204,
  'add reaction': 204,
  'remove reaction': 204,
  'rename thread': 200,
  'change tags': 200,
};

type Expected = number | typeof THREAD_LOCKED | typeof THREAD_ARCHIVED;
const ok = (action: Action): Expected => OK[action];
const LOCK = THREAD_LOCKED;
const ARCH = THREAD_ARCHIVED;

/** Expected outcome per (locked, archived, MANAGE_THREADS): a success status, or the error body (400). */
const TABLE: Array<[boolean, boolean, boolean, Record<Action, Expected>]> = [
  [false, false, false, all(ok)],
  [false, false, true, all(ok)],
  [
    true,
    false,
    false,
    {
      'create message': LOCK,
      'edit message': LOCK,
      'delete message': 204,
      'add reaction': 204,
      'remove reaction': 204,
      'rename thread': LOCK,
      'change tags': LOCK,
    },
  ],
  [true, false, true, all(ok)],
  [false, true, false, archived()],
  [false, true, true, archived()],
  [true, true, false, all(() => ARCH)],
  [true, true, true, archived()],
];

/** An archived thread: a new message unarchives it, deleting stays allowed, anything else is 50083. */
function archived(): Record<Action, Expected> {
  return { ...all(() => ARCH), 'create message': 200, 'delete message': 204 };
}

function all(outcome: (action: Action) => Expected): Record<Action, Expected> {
  return Object.fromEntries(
    (Object.keys(OK) as Action[]).map((action) => [action, outcome(action)]),
  ) as Record<Action, Expected>;
}

/** A forum post by the actor, a message and a 👍 of theirs in it, then locked / archived by a moderator. */
async function prepare(actor: User, locked: boolean, archivedState: boolean): Promise<Cell> {
  const created = await call<{ id: string }>(hearth, `/channels/${room.forumId}/threads`, {
    method: 'POST',
    auth: actor.token,
    body: { name: 'post', applied_tags: [room.tags.open], message: { content: 'first' } },
  });
  expect(created.status).toBe(201);
  const thread = created.body.id;
  const message = await post(hearth, thread, actor.token, { content: 'mine' });
  expect(message.status).toBe(200);
  const reacted = await call(
    hearth,
    `/channels/${thread}/messages/${message.body.id}/reactions/${THUMBS}/@me`,
    {
      method: 'PUT',
      auth: actor.token,
    },
  );
  expect(reacted.status).toBe(204);
  if (locked || archivedState) {
    const state = await patchThread(hearth, thread, room.moderator.token, {
      ...(locked ? { locked: true } : {}),
      ...(archivedState ? { archived: true } : {}),
    });
    expect(state.status).toBe(200);
    expect(state.body['thread_metadata']).toMatchObject({ locked, archived: archivedState });
  }
  return { thread, message: message.body.id, actor };
}

describe('Locked threads (seed, States): (locked, archived, MANAGE_THREADS) × action', () => {
  for (const [locked, archivedState, manages, outcomes] of TABLE) {
    for (const action of Object.keys(OK) as Action[]) {
      const expected = outcomes[action];
      const title = `locked=${locked} archived=${archivedState} MANAGE_THREADS=${manages}: ${action} → ${
        typeof expected === 'number' ? expected : expected.code
      }`;
      it(title, async () => {
        const cell = await prepare(manages ? room.moderator : room.member, locked, archivedState);
        const answer = await ACTIONS[action](cell);
        if (typeof expected === 'number') {
          expect(answer.status, JSON.stringify(answer.body)).toBe(expected);
        } else {
          expect({ status: answer.status, body: answer.body }).toEqual({ status: 400, body: expected });
        }
      });
    }
  }

  it('a refused write leaves the thread as it was; a message into an unlocked archived thread unarchives it', async () => {
    const lockedCell = await prepare(room.member, true, false);
    await ACTIONS['rename thread'](lockedCell);
    await ACTIONS['edit message'](lockedCell);
    const thread = await call(hearth, `/channels/${lockedCell.thread}`, { auth: room.member.token });
    expect(thread.body).toMatchObject({ name: 'post', thread_metadata: { locked: true, archived: false } });
    const message = await call(hearth, `/channels/${lockedCell.thread}/messages/${lockedCell.message}`, {
      auth: room.member.token,
    });
    expect(message.body).toMatchObject({ content: 'mine', edited_timestamp: null });

    const archivedCell = await prepare(room.member, false, true);
    expect((await ACTIONS['create message'](archivedCell)).status).toBe(200);
    const reopened = await call(hearth, `/channels/${archivedCell.thread}`, { auth: room.member.token });
    expect(reopened.body).toMatchObject({ thread_metadata: { archived: false, locked: false } });
    // Now active again, the edit refused a moment ago goes through.
    expect((await ACTIONS['edit message'](archivedCell)).status).toBe(200);
  });

  it('a locked thread is unarchived only by MANAGE_THREADS; its creator gets 50013', async () => {
    const cell = await prepare(room.member, true, true);
    expect(await patchThread(hearth, cell.thread, room.member.token, { archived: false })).toMatchObject({
      status: 403,
      body: { code: 50013 },
    });
    const reopened = await patchThread(hearth, cell.thread, room.moderator.token, { archived: false });
    expect(reopened.body['thread_metadata']).toMatchObject({ archived: false, locked: true });
    // Unarchived but still locked: the creator may delete and react, not post.
    expect(await ACTIONS['create message'](cell)).toEqual({ status: 400, body: THREAD_LOCKED });
    expect((await ACTIONS['add reaction'](cell)).status).toBe(204);
  });
});
