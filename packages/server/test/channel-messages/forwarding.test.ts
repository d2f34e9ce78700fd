import {
  ForwardLimits,
  GatewayIntents,
  MessageFlags,
  MessageReferenceTypes,
  MessageTypes,
  PermissionFlags,
} from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  seedTestChannel,
  setEveryonePermissions,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call, invalidForm, MISSING_ACCESS, MISSING_PERMISSIONS } from '../guilds/core-helpers.js';
import { identify, send } from './actions-support.js';

const { ViewChannel, SendMessages, ReadMessageHistory } = PermissionFlags;
const MEMBER_BITS = ViewChannel | SendMessages | ReadMessageHistory;
const UNREADABLE = { code: 160014, message: 'You cannot forward a message whose content you cannot read' };
const FORWARD = MessageReferenceTypes.Forward;

describe('Forwarding (message_reference type FORWARD, GUILDS.md §4.4)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth();
  });
  afterAll(() => hearth.close());

  /** A guild with two text channels members may use, and a message in the first. */
  async function setup() {
    const guild = await createTestGuild(hearth);
    await setEveryonePermissions(hearth, guild, MEMBER_BITS);
    const from = await seedTestChannel(hearth, guild.id);
    const to = await seedTestChannel(hearth, guild.id);
    const member = await addTestMember(hearth, guild);
    const source = await send(hearth, guild.owner.token, from, { content: 'the original' });
    return { guild, from, to, member, source };
  }

  const forward = (
    to: string,
    auth: string,
    reference: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) =>
    call(hearth, `/channels/${to}/messages`, {
      method: 'POST',
      auth,
      body: { message_reference: { type: FORWARD, ...reference }, ...extra },
    });

  it('creates a message whose one snapshot carries the original, with HAS_SNAPSHOT and the source ids', async () => {
    const { guild, from, to, member, source } = await setup();
    const { status, body } = await forward(to, member.token, { message_id: source.id, channel_id: from });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      channel_id: to,
      author: { id: member.id },
      type: MessageTypes.Default,
      content: '',
      flags: MessageFlags.HasSnapshot,
      message_reference: { type: FORWARD, channel_id: from, message_id: source.id, guild_id: guild.id },
    });
    expect((body as { message_snapshots: unknown }).message_snapshots).toEqual([
      {
        message: {
          type: MessageTypes.Default,
          content: 'the original',
          embeds: [],
          attachments: [],
          timestamp: source['timestamp'],
          edited_timestamp: null,
          flags: 0,
          mentions: [],
          mention_roles: [],
          components: [],
          stickers: [],
          sticker_items: [],
        },
      },
    ]);
    expect(body).not.toHaveProperty('referenced_message');
  });

  it('the snapshot stays as it was when the original is edited, and a forward of a forward carries the original', async () => {
    const { guild, from, to, source } = await setup();
    const first = await forward(to, guild.owner.token, { message_id: source.id, channel_id: from });
    const firstId = (first.body as { id: string }).id;
    const edited = await call(hearth, `/channels/${from}/messages/${source.id}`, {
      method: 'PATCH',
      auth: guild.owner.token,
      body: { content: 'changed later' },
    });
    expect(edited.status).toBe(200);
    const read = await call(hearth, `/channels/${to}/messages/${firstId}`, { auth: guild.owner.token });
    const snapshots = (read.body as { message_snapshots: Array<{ message: { content: string } }> })
      .message_snapshots;
    expect(snapshots.map((snapshot) => snapshot.message.content)).toEqual(['the original']);
    const again = await forward(from, guild.owner.token, { message_id: firstId, channel_id: to });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      message_reference: { channel_id: to, message_id: firstId },
      message_snapshots: [{ message: { content: 'the original' } }],
    });
  });

  it('MESSAGE_CREATE of a forward carries the snapshot', async () => {
    const { guild, from, to, source } = await setup();
    const game = await addTestBot(hearth, guild);
    await hearth.services.applications.adminUpdate(game.id, {
      grant_flags: ['GatewayMessageContentLimited'],
    });
    const client = await identify(
      hearth,
      game.botToken,
      GatewayIntents.Guilds | GatewayIntents.GuildMessages | GatewayIntents.MessageContent,
      1,
    );
    await forward(to, guild.owner.token, { message_id: source.id, channel_id: from });
    const created = await client.nextDispatch('MESSAGE_CREATE');
    expect(created.d).toMatchObject({
      channel_id: to,
      guild_id: guild.id,
      flags: MessageFlags.HasSnapshot,
      message_snapshots: [{ message: { content: 'the original' } }],
    });
    await client.close();
  });

  it('a bot without MESSAGE_CONTENT gets the forward’s snapshot emptied, as it gets message content', async () => {
    const { guild, from, to, source } = await setup();
    const game = await addTestBot(hearth, guild);
    const client = await identify(
      hearth,
      game.botToken,
      GatewayIntents.Guilds | GatewayIntents.GuildMessages,
      1,
    );
    await forward(to, guild.owner.token, { message_id: source.id, channel_id: from });
    const created = await client.nextDispatch('MESSAGE_CREATE');
    expect(created.d).toMatchObject({
      flags: MessageFlags.HasSnapshot,
      message_snapshots: [
        {
          message: {
            content: '',
            embeds: [],
            attachments: [],
            components: [],
            timestamp: source['timestamp'],
          },
        },
      ],
    });
    await client.close();
  });

  it.each([
    ['without channel_id', (id: string) => ({ message_id: id }), 'channel_id'],
    ['without message_id', (_id: string, from: string) => ({ channel_id: from }), 'message_id'],
  ])('a forward %s is 50035 naming it', async (_name, reference, field) => {
    const { to, member, source, from } = await setup();
    expect(await forward(to, member.token, reference(source.id, from))).toEqual({
      status: 400,
      body: invalidForm({
        message_reference: {
          [field]: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] },
        },
      }),
    });
  });

  it('an unknown source is 50035; with fail_if_not_exists false the (empty) message is 50006', async () => {
    const { from, to, member } = await setup();
    const unknown = { message_id: '123456789012345678', channel_id: from };
    expect(await forward(to, member.token, unknown)).toEqual({
      status: 400,
      body: invalidForm({
        message_reference: {
          _errors: [{ code: 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', message: 'Unknown message' }],
        },
      }),
    });
    expect(await forward(to, member.token, { ...unknown, fail_if_not_exists: false })).toEqual({
      status: 400,
      body: { code: 50006, message: 'Cannot send an empty message' },
    });
  });

  it('the forwarder must see the source channel (50001) and read its history (50013)', async () => {
    const { guild, from, to, source } = await setup();
    const outsider = await createTestGuild(hearth);
    await setEveryonePermissions(hearth, outsider, MEMBER_BITS);
    const theirs = await seedTestChannel(hearth, outsider.id);
    expect(await forward(theirs, outsider.owner.token, { message_id: source.id, channel_id: from })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    const hidden = await seedTestChannel(hearth, guild.id, {
      overwrites: [{ id: guild.id, type: 0, allow: 0n, deny: ReadMessageHistory }],
    });
    const secret = await send(hearth, guild.owner.token, hidden, { content: 'secret' });
    const member = await addTestMember(hearth, guild);
    expect(await forward(to, member.token, { message_id: secret.id, channel_id: hidden })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
  });

  it('a system message cannot be forwarded (50021)', async () => {
    const { guild, from, to } = await setup();
    const joinId = String(BigInt(guild.id) + 77n);
    await hearth.storage.db
      .insertInto('messages')
      .values({
        id: joinId,
        channel_id: from,
        guild_id: guild.id,
        author_id: guild.owner.id,
        type: MessageTypes.UserJoin,
        created_at: hearth.clock.now(),
      })
      .execute();
    expect(await forward(to, guild.owner.token, { message_id: joinId, channel_id: from })).toEqual({
      status: 400,
      body: { code: 50021, message: 'Cannot execute action on a system message' },
    });
  });

  describe('an app forwards only what it can read (160014, seed)', () => {
    async function botSetup() {
      const s = await setup();
      const game = await addTestBot(hearth, s.guild);
      return { ...s, game, auth: `Bot ${game.botToken}` };
    }

    it('a bot without the message-content intent cannot forward another user’s message', async () => {
      const { from, to, source, auth } = await botSetup();
      expect(await forward(to, auth, { message_id: source.id, channel_id: from })).toEqual({
        status: 403,
        body: UNREADABLE,
      });
    });

    it('it can forward its own message, and one that mentions it', async () => {
      const { guild, from, to, game, auth } = await botSetup();
      const own = await send(hearth, auth, from, { content: 'mine' });
      expect((await forward(to, auth, { message_id: own.id, channel_id: from })).status).toBe(200);
      const mention = await send(hearth, guild.owner.token, from, { content: `hey <@${game.botUserId}>` });
      expect((await forward(to, auth, { message_id: mention.id, channel_id: from })).status).toBe(200);
    });

    it('with the intent approved it can forward any message it sees', async () => {
      const { from, to, source, game, auth } = await botSetup();
      await hearth.services.applications.adminUpdate(game.id, {
        grant_flags: ['GatewayMessageContentLimited'],
      });
      expect((await forward(to, auth, { message_id: source.id, channel_id: from })).status).toBe(200);
    });
  });

  it(`forwards spend a stricter limit: ${ForwardLimits.forwards.limit} a minute per user, then 429`, async () => {
    const { from, to, member, source } = await setup();
    for (let i = 0; i < ForwardLimits.forwards.limit; i++)
      expect((await forward(to, member.token, { message_id: source.id, channel_id: from })).status).toBe(200);
    const { status, body } = await forward(to, member.token, { message_id: source.id, channel_id: from });
    expect(status).toBe(429);
    expect(body).toEqual({
      message: 'You are being rate limited.',
      retry_after: expect.any(Number),
      global: false,
      code: 0,
    });
    // Sending is not forwarding: the same user may still post.
    expect(
      (
        await call(hearth, `/channels/${to}/messages`, {
          method: 'POST',
          auth: member.token,
          body: { content: 'x' },
        })
      ).status,
    ).toBe(200);
  });
});
