import { GatewayIntents, MessageLimits, OverwriteTypes, PermissionFlags } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  grantTestRole,
  seedTestChannel,
  setEveryonePermissions,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call, invalidForm, MISSING_ACCESS, MISSING_PERMISSIONS } from '../guilds/core-helpers.js';
import { barrier, dispatchesUntilBarrier, identify, openDm, send } from './actions-support.js';

const UNKNOWN_EMOJI = { code: 10014, message: 'Unknown Emoji' };
const UNKNOWN_MESSAGE = { code: 10008, message: 'Unknown Message' };
const MAXIMUM_REACTIONS = { code: 30010, message: 'Maximum number of reactions reached (20)' };

const { ViewChannel, SendMessages, ReadMessageHistory, AddReactions, ManageMessages } = PermissionFlags;
/** What @everyone holds in these suites: see, write, read history, react. */
const MEMBER_BITS = ViewChannel | SendMessages | ReadMessageHistory | AddReactions;

const THUMBS = '👍';
const thumbs = encodeURIComponent(THUMBS);

/** Twenty-one different unicode emoji, URL-encoded. */
const EMOJI = [
  '😀',
  '😁',
  '😂',
  '🤣',
  '😃',
  '😄',
  '😅',
  '😆',
  '😉',
  '😊',
  '😋',
  '😎',
  '😍',
  '😘',
  '🥰',
  '😗',
  '😙',
  '🥲',
  '😚',
  '🙂',
  '🤗',
];

interface Setup {
  guild: TestGuild;
  channelId: string;
  member: { id: string; token: string };
  messageId: string;
}

describe('Reactions (GUILDS.md §4.10)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth();
  });
  afterAll(() => hearth.close());

  /** A guild whose members may see, write, read and react, one text channel and a message of the owner's. */
  async function setup(): Promise<Setup> {
    const guild = await createTestGuild(hearth);
    await setEveryonePermissions(hearth, guild, MEMBER_BITS);
    const channelId = await seedTestChannel(hearth, guild.id);
    const member = await addTestMember(hearth, guild);
    const message = await send(hearth, guild.owner.token, channelId);
    return { guild, channelId, member, messageId: message.id };
  }

  const path = (s: Setup, emoji: string, rest = '') =>
    `/channels/${s.channelId}/messages/${s.messageId}/reactions/${emoji}${rest}`;

  async function react(s: Setup, token: string, emoji: string) {
    return call(hearth, path(s, emoji, '/@me'), { method: 'PUT', auth: token });
  }

  async function reactionsOf(s: Setup, token: string) {
    const { body } = await call(hearth, `/channels/${s.channelId}/messages/${s.messageId}`, { auth: token });
    return (body as { reactions?: unknown[] }).reactions;
  }

  describe('PUT …/reactions/{emoji}/@me', () => {
    it('adds a unicode emoji: 204, and the message counts it with `me` for the reactor only', async () => {
      const s = await setup();
      expect(await react(s, s.member.token, thumbs)).toEqual({ status: 204, body: undefined });
      const entry = {
        emoji: { id: null, name: THUMBS },
        count: 1,
        count_details: { burst: 0, normal: 1 },
        burst_colors: [],
        me_burst: false,
      };
      expect(await reactionsOf(s, s.member.token)).toEqual([{ ...entry, me: true }]);
      expect(await reactionsOf(s, s.guild.owner.token)).toEqual([{ ...entry, me: false }]);
    });

    it('adds custom emoji written `name:id` (and `a:name:id` for an animated one)', async () => {
      const s = await setup();
      expect((await react(s, s.member.token, 'hearth:112233445566778899')).status).toBe(204);
      expect((await react(s, s.member.token, encodeURIComponent('a:dance:998877665544332211'))).status).toBe(
        204,
      );
      const reactions = (await reactionsOf(s, s.member.token)) as Array<{ emoji: unknown; count: number }>;
      expect(reactions.map((reaction) => reaction.emoji)).toEqual([
        { id: '112233445566778899', name: 'hearth', animated: false },
        { id: '998877665544332211', name: 'dance', animated: true },
      ]);
    });

    it('an emoji with a skin tone, a flag and a heart without its presentation selector are emoji', async () => {
      const s = await setup();
      for (const emoji of ['👍🏽', '🇫🇷', '❤', '❤️', '👨‍👩‍👧'])
        expect((await react(s, s.member.token, encodeURIComponent(emoji))).status, emoji).toBe(204);
      expect(await reactionsOf(s, s.member.token)).toHaveLength(5);
    });

    it.each([
      ['a word', 'thumbsup'],
      ['two emoji', encodeURIComponent('👍👍')],
      ['a letter', 'a'],
      ['a custom emoji without an id', 'hearth:'],
      ['a custom emoji whose id is not a number', 'hearth:abc'],
      ['a custom emoji with a one-letter name', 'h:112233445566778899'],
      ['a custom emoji whose id is too large', 'hearth:99999999999999999999'],
    ])('%s is 10014 Unknown Emoji and adds nothing', async (_name, emoji) => {
      const s = await setup();
      expect(await react(s, s.member.token, emoji)).toEqual({ status: 404, body: UNKNOWN_EMOJI });
      expect(await reactionsOf(s, s.member.token)).toBeUndefined();
    });

    it('reacting twice with the same emoji counts once', async () => {
      const s = await setup();
      expect((await react(s, s.member.token, thumbs)).status).toBe(204);
      expect((await react(s, s.member.token, thumbs)).status).toBe(204);
      expect(await reactionsOf(s, s.member.token)).toEqual([expect.objectContaining({ count: 1 })]);
    });

    it('twenty different emoji fit on a message; the 21st is 30010; another user may still join one of the 20', async () => {
      const s = await setup();
      expect(EMOJI).toHaveLength(MessageLimits.reactionsPerMessage + 1);
      for (const emoji of EMOJI.slice(0, 20))
        expect((await react(s, s.member.token, encodeURIComponent(emoji))).status).toBe(204);
      expect(await react(s, s.member.token, encodeURIComponent(EMOJI[20]!))).toEqual({
        status: 400,
        body: MAXIMUM_REACTIONS,
      });
      expect(await react(s, s.guild.owner.token, encodeURIComponent(EMOJI[0]!))).toEqual({
        status: 204,
        body: undefined,
      });
      const reactions = (await reactionsOf(s, s.member.token)) as Array<{ count: number }>;
      expect(reactions).toHaveLength(20);
      expect(reactions[0]!.count).toBe(2);
    });

    it('ADD_REACTIONS is needed for a new emoji (50013), not to join one already there', async () => {
      const s = await setup();
      await setEveryonePermissions(hearth, s.guild, MEMBER_BITS & ~AddReactions);
      expect(await react(s, s.member.token, thumbs)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
      expect((await react(s, s.guild.owner.token, thumbs)).status).toBe(204);
      expect((await react(s, s.member.token, thumbs)).status).toBe(204);
      expect(await reactionsOf(s, s.member.token)).toEqual([expect.objectContaining({ count: 2, me: true })]);
    });

    it('READ_MESSAGE_HISTORY is needed (50013); VIEW_CHANNEL too (50001)', async () => {
      const s = await setup();
      await setEveryonePermissions(hearth, s.guild, MEMBER_BITS & ~ReadMessageHistory);
      expect(await react(s, s.member.token, thumbs)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
      await setEveryonePermissions(hearth, s.guild, MEMBER_BITS & ~ViewChannel);
      expect(await react(s, s.member.token, thumbs)).toEqual({ status: 403, body: MISSING_ACCESS });
    });

    it('a user outside the guild gets 50001; an unknown message 10008; a message of another channel 10008', async () => {
      const s = await setup();
      const other = await createTestGuild(hearth);
      expect(await react(s, other.owner.token, thumbs)).toEqual({ status: 403, body: MISSING_ACCESS });
      const unknown = `/channels/${s.channelId}/messages/123456789012345678/reactions/${thumbs}/@me`;
      expect(await call(hearth, unknown, { method: 'PUT', auth: s.member.token })).toEqual({
        status: 404,
        body: UNKNOWN_MESSAGE,
      });
      const elsewhere = await seedTestChannel(hearth, s.guild.id);
      const moved = `/channels/${elsewhere}/messages/${s.messageId}/reactions/${thumbs}/@me`;
      expect(await call(hearth, moved, { method: 'PUT', auth: s.member.token })).toEqual({
        status: 404,
        body: UNKNOWN_MESSAGE,
      });
    });

    it('a path id that is no snowflake is 50035', async () => {
      const s = await setup();
      const bad = `/channels/${s.channelId}/messages/nope/reactions/${thumbs}/@me`;
      const { status, body } = await call(hearth, bad, { method: 'PUT', auth: s.member.token });
      expect(status).toBe(400);
      expect(body).toMatchObject({ code: 50035 });
    });
  });

  describe('DELETE …/reactions/{emoji}/@me and …/{user_id}', () => {
    it('removes one’s own reaction; removing one not there is 204 too', async () => {
      const s = await setup();
      await react(s, s.member.token, thumbs);
      await react(s, s.guild.owner.token, thumbs);
      expect(await call(hearth, path(s, thumbs, '/@me'), { method: 'DELETE', auth: s.member.token })).toEqual(
        {
          status: 204,
          body: undefined,
        },
      );
      expect(await reactionsOf(s, s.member.token)).toEqual([
        expect.objectContaining({ count: 1, me: false }),
      ]);
      expect(
        (await call(hearth, path(s, thumbs, '/@me'), { method: 'DELETE', auth: s.member.token })).status,
      ).toBe(204);
    });

    it('another user’s reaction needs MANAGE_MESSAGES (50013); with it, it is gone', async () => {
      const s = await setup();
      await react(s, s.member.token, thumbs);
      const moderator = await addTestMember(hearth, s.guild);
      const theirs = path(s, thumbs, `/${s.member.id}`);
      expect(await call(hearth, theirs, { method: 'DELETE', auth: moderator.token })).toEqual({
        status: 403,
        body: MISSING_PERMISSIONS,
      });
      await grantTestRole(hearth, s.guild, ManageMessages, [moderator.id]);
      expect(await call(hearth, theirs, { method: 'DELETE', auth: moderator.token })).toEqual({
        status: 204,
        body: undefined,
      });
      expect(await reactionsOf(s, s.member.token)).toBeUndefined();
    });

    it('one’s own id in the path needs no MANAGE_MESSAGES', async () => {
      const s = await setup();
      await react(s, s.member.token, thumbs);
      const own = path(s, thumbs, `/${s.member.id}`);
      expect((await call(hearth, own, { method: 'DELETE', auth: s.member.token })).status).toBe(204);
      expect(await reactionsOf(s, s.member.token)).toBeUndefined();
    });
  });

  describe('GET …/reactions/{emoji}', () => {
    it('lists the users who reacted, by id, 25 by default, `limit` 1–100 and `after`', async () => {
      const s = await setup();
      const users = [
        s.member,
        ...(await Promise.all(Array.from({ length: 26 }, () => addTestMember(hearth, s.guild)))),
      ];
      for (const user of users) await react(s, user.token, thumbs);
      const ids = users.map((user) => user.id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
      const list = async (query = '') => {
        const { status, body } = await call(hearth, path(s, thumbs, query), { auth: s.member.token });
        expect(status, JSON.stringify(body)).toBe(200);
        return (body as Array<{ id: string; username: string }>).map((user) => user.id);
      };
      expect(await list()).toEqual(ids.slice(0, MessageLimits.reactionUsersDefault));
      expect(await list('?limit=1')).toEqual(ids.slice(0, 1));
      expect(await list('?limit=100')).toEqual(ids);
      expect(await list(`?after=${ids[24]}`)).toEqual(ids.slice(25));
      expect(await list('?type=1')).toEqual([]);
      const { body } = await call(hearth, path(s, thumbs, '?limit=1'), { auth: s.member.token });
      expect(body).toEqual([expect.objectContaining({ id: ids[0], username: expect.any(String) })]);
    });

    it.each([
      [
        'limit=0',
        {
          limit: {
            _errors: [
              { code: 'NUMBER_TYPE_MIN', message: 'int value should be greater than or equal to 1.' },
            ],
          },
        },
      ],
      [
        'limit=101',
        {
          limit: {
            _errors: [{ code: 'NUMBER_TYPE_MAX', message: 'int value should be less than or equal to 100.' }],
          },
        },
      ],
      ['type=2', { type: { _errors: [expect.objectContaining({ code: 'BASE_TYPE_CHOICES' })] } }],
      ['after=x', { after: { _errors: [expect.objectContaining({ code: 'NUMBER_TYPE_COERCE' })] } }],
    ])('%s is 50035 naming the field', async (query, errors) => {
      const s = await setup();
      expect(await call(hearth, path(s, thumbs, `?${query}`), { auth: s.member.token })).toEqual({
        status: 400,
        body: invalidForm(errors),
      });
    });

    it('an emoji nobody used lists nobody; an unknown one is 10014', async () => {
      const s = await setup();
      expect(await call(hearth, path(s, thumbs), { auth: s.member.token })).toEqual({
        status: 200,
        body: [],
      });
      expect(await call(hearth, path(s, 'thumbsup'), { auth: s.member.token })).toEqual({
        status: 404,
        body: UNKNOWN_EMOJI,
      });
    });
  });

  describe('DELETE …/reactions and …/reactions/{emoji}', () => {
    it('removing every reaction needs MANAGE_MESSAGES; then the message has none', async () => {
      const s = await setup();
      await react(s, s.member.token, thumbs);
      await react(s, s.member.token, 'hearth:112233445566778899');
      const all = `/channels/${s.channelId}/messages/${s.messageId}/reactions`;
      expect(await call(hearth, all, { method: 'DELETE', auth: s.member.token })).toEqual({
        status: 403,
        body: MISSING_PERMISSIONS,
      });
      expect((await call(hearth, all, { method: 'DELETE', auth: s.guild.owner.token })).status).toBe(204);
      expect(await reactionsOf(s, s.member.token)).toBeUndefined();
    });

    it('removing one emoji needs MANAGE_MESSAGES and leaves the others', async () => {
      const s = await setup();
      await react(s, s.member.token, thumbs);
      await react(s, s.guild.owner.token, thumbs);
      await react(s, s.member.token, 'hearth:112233445566778899');
      expect(await call(hearth, path(s, thumbs), { method: 'DELETE', auth: s.member.token })).toEqual({
        status: 403,
        body: MISSING_PERMISSIONS,
      });
      expect(
        (await call(hearth, path(s, thumbs), { method: 'DELETE', auth: s.guild.owner.token })).status,
      ).toBe(204);
      const left = (await reactionsOf(s, s.member.token)) as Array<{ emoji: { name: string } }>;
      expect(left.map((reaction) => reaction.emoji.name)).toEqual(['hearth']);
    });
  });

  describe('MESSAGE_REACTION_* over the gateway', () => {
    it('a bot with GUILD_MESSAGE_REACTIONS gets ADD (member, author), REMOVE, REMOVE_EMOJI and REMOVE_ALL', async () => {
      const s = await setup();
      const game = await addTestBot(hearth, s.guild);
      const client = await identify(
        hearth,
        game.botToken,
        GatewayIntents.Guilds | GatewayIntents.GuildMessageReactions,
        1,
      );
      await react(s, s.member.token, thumbs);
      await call(hearth, path(s, thumbs, '/@me'), { method: 'DELETE', auth: s.member.token });
      await react(s, s.member.token, 'hearth:112233445566778899');
      await call(hearth, path(s, 'hearth:112233445566778899'), {
        method: 'DELETE',
        auth: s.guild.owner.token,
      });
      await react(s, s.member.token, thumbs);
      await call(hearth, `/channels/${s.channelId}/messages/${s.messageId}/reactions`, {
        method: 'DELETE',
        auth: s.guild.owner.token,
      });
      await barrier(hearth, s.guild);
      const frames = await dispatchesUntilBarrier(client);
      const ids = { channel_id: s.channelId, message_id: s.messageId, guild_id: s.guild.id };
      const emoji = { id: null, name: THUMBS };
      expect(frames.map((frame) => frame.t)).toEqual([
        'MESSAGE_REACTION_ADD',
        'MESSAGE_REACTION_REMOVE',
        'MESSAGE_REACTION_ADD',
        'MESSAGE_REACTION_REMOVE_EMOJI',
        'MESSAGE_REACTION_ADD',
        'MESSAGE_REACTION_REMOVE_ALL',
      ]);
      expect(frames[0]!.d).toEqual({
        user_id: s.member.id,
        ...ids,
        emoji,
        burst: false,
        type: 0,
        message_author_id: s.guild.owner.id,
        member: expect.objectContaining({
          user: expect.objectContaining({ id: s.member.id }),
          roles: [],
          joined_at: expect.any(String),
        }),
      });
      expect(frames[1]!.d).toEqual({ user_id: s.member.id, ...ids, emoji, burst: false, type: 0 });
      expect(frames[3]!.d).toEqual({
        ...ids,
        emoji: { id: '112233445566778899', name: 'hearth', animated: false },
      });
      expect(frames[5]!.d).toEqual(ids);
      await client.close();
    });

    it('nothing reaches a bot without the intent, nor one that cannot view the channel', async () => {
      const s = await setup();
      const without = await addTestBot(hearth, s.guild);
      const blind = await addTestBot(hearth, s.guild);
      await hearth.storage.db
        .insertInto('channel_overwrites')
        .values({
          channel_id: s.channelId,
          target_id: blind.botUserId,
          type: OverwriteTypes.Member,
          allow: '0',
          deny: ViewChannel.toString(),
        })
        .execute();
      const clients = [
        await identify(hearth, without.botToken, GatewayIntents.Guilds | GatewayIntents.GuildMessages, 1),
        await identify(
          hearth,
          blind.botToken,
          GatewayIntents.Guilds | GatewayIntents.GuildMessageReactions,
          1,
        ),
      ];
      await react(s, s.member.token, thumbs);
      await barrier(hearth, s.guild);
      for (const client of clients) {
        expect(await dispatchesUntilBarrier(client)).toEqual([]);
        await client.close();
      }
    });

    it('in a DM, the other participant’s bot gets them with DIRECT_MESSAGE_REACTIONS, without guild or member', async () => {
      const s = await setup();
      const game = await addTestBot(hearth, s.guild);
      const dmId = await openDm(hearth, `Bot ${game.botToken}`, s.member.id);
      const message = await send(hearth, `Bot ${game.botToken}`, dmId, { content: 'hi' });
      const client = await identify(hearth, game.botToken, GatewayIntents.DirectMessageReactions);
      const dm = `/channels/${dmId}/messages/${message.id}/reactions`;
      expect(
        (await call(hearth, `${dm}/${thumbs}/@me`, { method: 'PUT', auth: s.member.token })).status,
      ).toBe(204);
      expect((await client.nextDispatch('MESSAGE_REACTION_ADD')).d).toEqual({
        user_id: s.member.id,
        channel_id: dmId,
        message_id: message.id,
        emoji: { id: null, name: THUMBS },
        burst: false,
        type: 0,
        message_author_id: game.botUserId,
      });
      // No one moderates a DM: removing another's reactions is 50003.
      const dmOnly = { code: 50003, message: 'Cannot execute action on a DM channel' };
      expect(
        await call(hearth, `${dm}/${thumbs}/${s.member.id}`, {
          method: 'DELETE',
          auth: `Bot ${game.botToken}`,
        }),
      ).toEqual({
        status: 403,
        body: dmOnly,
      });
      expect(await call(hearth, dm, { method: 'DELETE', auth: `Bot ${game.botToken}` })).toEqual({
        status: 403,
        body: dmOnly,
      });
      expect(
        (await call(hearth, `${dm}/${thumbs}/@me`, { method: 'DELETE', auth: s.member.token })).status,
      ).toBe(204);
      expect((await client.nextDispatch('MESSAGE_REACTION_REMOVE')).d).toMatchObject({ channel_id: dmId });
      await client.close();
    });

    it('reacting again sends no second MESSAGE_REACTION_ADD; removing nothing sends no REMOVE', async () => {
      const s = await setup();
      const game = await addTestBot(hearth, s.guild);
      const client = await identify(
        hearth,
        game.botToken,
        GatewayIntents.Guilds | GatewayIntents.GuildMessageReactions,
        1,
      );
      await react(s, s.member.token, thumbs);
      await react(s, s.member.token, thumbs);
      await call(hearth, path(s, encodeURIComponent('🎉'), '/@me'), {
        method: 'DELETE',
        auth: s.member.token,
      });
      await barrier(hearth, s.guild);
      expect((await dispatchesUntilBarrier(client)).map((frame) => frame.t)).toEqual([
        'MESSAGE_REACTION_ADD',
      ]);
      await client.close();
    });
  });
});
