import { GatewayIntents, PermissionFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  grantTestRole,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call } from '../guilds/core-helpers.js';
import { barrier, createRule, dispatchTypes, identify } from './support.js';

const NOW = '2026-03-01T00:00:00Z';
let hearth: TestHearth;
let clock: ManualClock;

beforeAll(async () => {
  clock = new ManualClock(NOW);
  hearth = await startHearth({}, clock);
});
afterAll(() => hearth.close());

const BLOCKED = {
  status: 400,
  body: { code: 200000, message: 'Message was blocked by automatic moderation' },
};

interface Member {
  id: string;
  token: string;
}

/** A guild with a text channel and a member holding @everyone's defaults (no MANAGE_GUILD). */
async function setting(): Promise<{ guild: TestGuild; channel: string; member: Member }> {
  const guild = await createTestGuild(hearth);
  const channel = await seedTestChannel(hearth, guild.id, { name: 'general' });
  const member = await addTestMember(hearth, guild);
  return { guild, channel, member };
}

const send = (author: Member, channel: string, content: string) =>
  call(hearth, `/channels/${channel}/messages`, { method: 'POST', auth: author.token, body: { content } });

/** Whether `content` gets through; a refusal must be exactly AutoMod's. */
async function passes(author: Member, channel: string, content: string): Promise<boolean> {
  const reply = await send(author, channel, content);
  if (reply.status === 200) return true;
  expect(reply).toEqual(BLOCKED);
  return false;
}

describe('A create or edit a blocking rule matches is refused with HTTP 400 and 200000 (GUILDS.md §10)', () => {
  it('refuses the create and stores nothing', async () => {
    const { guild, channel, member } = await setting();
    await createRule(hearth, guild, { trigger_metadata: { keyword_filter: ['forbidden'] } });
    expect(await send(member, channel, 'this is Forbidden talk')).toEqual(BLOCKED);
    expect(await send(member, channel, 'this is fine')).toMatchObject({ status: 200 });
    const history = await call(hearth, `/channels/${channel}/messages`, { auth: member.token });
    expect((history.body as Array<{ content: string }>).map((m) => m.content)).toEqual(['this is fine']);
  });

  it('refuses an edit whose new content matches (seed: editing a blocked message → HTTP 400), leaving it as it was', async () => {
    const { guild, channel, member } = await setting();
    const posted = await send(member, channel, 'hello there');
    const id = (posted.body as { id: string }).id;
    await createRule(hearth, guild, { trigger_metadata: { keyword_filter: ['forbidden'] } });
    const path = `/channels/${channel}/messages/${id}`;
    expect(
      await call(hearth, path, { method: 'PATCH', auth: member.token, body: { content: 'forbidden now' } }),
    ).toEqual(BLOCKED);
    const kept = await call(hearth, path, { auth: member.token });
    expect(kept.body).toMatchObject({ content: 'hello there', edited_timestamp: null });
    expect(
      (await call(hearth, path, { method: 'PATCH', auth: member.token, body: { content: 'hello again' } }))
        .status,
    ).toBe(200);
  });

  it('searches embeds too', async () => {
    const { guild, channel, member } = await setting();
    await createRule(hearth, guild, { trigger_metadata: { keyword_filter: ['forbidden'] } });
    const reply = await call(hearth, `/channels/${channel}/messages`, {
      method: 'POST',
      auth: member.token,
      body: { embeds: [{ title: 'a title', fields: [{ name: 'n', value: 'something forbidden' }] }] },
    });
    expect(reply).toEqual(BLOCKED);
  });
});

describe('Matching (DOCS auto-moderation: Keyword Matching Strategies, trigger metadata)', () => {
  it('KEYWORD: prefix `cat*`, suffix `*dog`, anywhere `*ana*`, whole words and phrases, case-insensitive, allow_list', async () => {
    const { guild, channel, member } = await setting();
    await createRule(hearth, guild, {
      trigger_metadata: {
        keyword_filter: ['cat*', '*dog', '*ana*', 'the mat', 'i like c++', 'tra', 'e-mail', '[x]'],
        allow_list: ['catalog*', 'hotdog'],
      },
    });
    const cases: Array<[string, boolean]> = [
      ['Catapult!', false],
      ['concat', true],
      ['a wild CATtle', false],
      ['bulldog.', false],
      ['dogs', true],
      ['bananas', false],
      ['on the   mat', false],
      ['the mattress', true],
      ['I LIKE C++ a lot', false],
      ['tra', false],
      ['extra', true],
      ['see the catalogue', true],
      ['a hotdog stand', true],
      ['the catalogue and the catnip', false],
      ['send an E-Mail', false],
      ['email', true],
      ['tick [x] here', false],
    ];
    for (const [content, expected] of cases)
      expect([content, await passes(member, channel, content)]).toEqual([content, expected]);
  });

  it('KEYWORD regex_patterns (case-sensitive as Rust regex, `(?i)` to fold case), with the allow_list too', async () => {
    const { guild, channel, member } = await setting();
    await createRule(hearth, guild, {
      trigger_metadata: { regex_patterns: ['\\d{3}-\\d{4}', '(?i)free nitro'], allow_list: ['555-0000'] },
    });
    expect(await passes(member, channel, 'call 555-1234')).toBe(false);
    expect(await passes(member, channel, 'call 55-12')).toBe(true);
    expect(await passes(member, channel, 'FREE Nitro here')).toBe(false);
    expect(await passes(member, channel, 'call 555-0000')).toBe(true);
  });

  it('KEYWORD_PRESET: the preset word lists, whole-word aware, with the allow_list', async () => {
    const { guild, channel, member } = await setting();
    await createRule(hearth, guild, {
      trigger_type: 4,
      trigger_metadata: { presets: [1], allow_list: ['shitake'] },
    });
    expect(await passes(member, channel, 'what the FUCK')).toBe(false);
    expect(await passes(member, channel, 'bullshit')).toBe(false);
    expect(await passes(member, channel, 'Scunthorpe United')).toBe(true);
    expect(await passes(member, channel, 'shitake mushrooms')).toBe(true);
    // Presets not chosen do not apply.
    expect(await passes(member, channel, 'porn')).toBe(true);
  });

  it('MENTION_SPAM: more distinct user and role mentions than mention_total_limit', async () => {
    const { guild, channel, member } = await setting();
    await createRule(hearth, guild, { trigger_type: 5, trigger_metadata: { mention_total_limit: 2 } });
    expect(await passes(member, channel, 'hey <@111111111111111111> <@&222222222222222222>')).toBe(true);
    expect(
      await passes(member, channel, '<@111111111111111111> <@!111111111111111111> <@111111111111111111>'),
    ).toBe(true);
    expect(
      await passes(member, channel, '<@111111111111111111> <@222222222222222222> <@&333333333333333333>'),
    ).toBe(false);
  });

  it('MENTION_SPAM raid protection: a sixth message with mentions from one author within a minute', async () => {
    const { guild, channel, member } = await setting();
    await createRule(hearth, guild, {
      trigger_type: 5,
      trigger_metadata: { mention_total_limit: 10, mention_raid_protection_enabled: true },
    });
    for (let i = 0; i < 5; i++)
      expect(await passes(member, channel, `hi <@11111111111111111${i}>`)).toBe(true);
    expect(await passes(member, channel, 'no mentions')).toBe(true);
    expect(await passes(member, channel, 'hi <@111111111111111119>')).toBe(false);
    clock.advance(60_000);
    expect(await passes(member, channel, 'hi <@111111111111111119>')).toBe(true);
  });

  it('SPAM: the same text a fourth time within 30 s, or an eleventh message within 5 s', async () => {
    const { guild, channel, member } = await setting();
    await createRule(hearth, guild, { trigger_type: 3, trigger_metadata: {} });
    for (let i = 0; i < 3; i++) expect(await passes(member, channel, 'Buy   GOLD now')).toBe(true);
    expect(await passes(member, channel, 'buy gold now')).toBe(false);
    clock.advance(30_000);
    expect(await passes(member, channel, 'buy gold now')).toBe(true);
    clock.advance(30_000);
    for (let i = 0; i < 10; i++) expect(await passes(member, channel, `message ${i}`)).toBe(true);
    expect(await passes(member, channel, 'message 10')).toBe(false);
    clock.advance(5_000);
    // Edits send nothing new: they never count.
    const posted = await send(member, channel, 'edit me');
    const path = `/channels/${channel}/messages/${(posted.body as { id: string }).id}`;
    for (let i = 0; i < 12; i++)
      expect(
        (await call(hearth, path, { method: 'PATCH', auth: member.token, body: { content: 'edit me' } }))
          .status,
      ).toBe(200);
  });
});

describe('Who is not checked (DOCS auto-moderation: exempt roles and channels, MANAGE_GUILD)', () => {
  it('members with MANAGE_GUILD (the owner, ADMINISTRATOR), exempt roles, exempt channels and their categories; disabled rules', async () => {
    const { guild, channel, member } = await setting();
    const owner = { id: guild.owner.id, token: guild.owner.token };
    const manager = await addTestMember(hearth, guild);
    await grantTestRole(hearth, guild, PermissionFlags.ManageGuild, [manager.id]);
    const admin = await addTestMember(hearth, guild);
    await grantTestRole(hearth, guild, PermissionFlags.Administrator, [admin.id]);
    const trusted = await addTestMember(hearth, guild);
    const trustedRole = await grantTestRole(hearth, guild, 0n, [trusted.id]);
    const exempt = await seedTestChannel(hearth, guild.id);
    const category = await seedTestChannel(hearth, guild.id, { type: 4 });
    const inCategory = await seedTestChannel(hearth, guild.id);
    await hearth.storage.db
      .updateTable('channels')
      .set({ parent_id: category })
      .where('id', '=', inCategory)
      .execute();
    await createRule(hearth, guild, {
      trigger_metadata: { keyword_filter: ['forbidden'] },
      exempt_roles: [trustedRole],
      exempt_channels: [exempt, category],
    });
    for (const who of [owner, manager, admin, trusted])
      expect(await passes(who, channel, 'forbidden')).toBe(true);
    expect(await passes(member, exempt, 'forbidden')).toBe(true);
    expect(await passes(member, inCategory, 'forbidden')).toBe(true);
    expect(await passes(member, channel, 'forbidden')).toBe(false);
    const disabled = await createRule(hearth, guild, {
      name: 'off',
      enabled: false,
      trigger_metadata: { keyword_filter: ['other'] },
    });
    expect(disabled.enabled).toBe(false);
    expect(await passes(member, channel, 'other')).toBe(true);
  });
});

describe('Actions: alert message (type 24), timeout, audit entries 143–145', () => {
  it('SEND_ALERT_MESSAGE alone lets the message through and posts the alert, a type 24 message shown as the member’s', async () => {
    const { guild, channel, member } = await setting();
    const alerts = await seedTestChannel(hearth, guild.id, { name: 'mod-log' });
    const rule = await createRule(hearth, guild, {
      name: 'watch words',
      trigger_metadata: { keyword_filter: ['heck*'] },
      actions: [{ type: 2, metadata: { channel_id: alerts } }],
    });
    const owner = await identify(hearth, guild.owner.token);
    const posted = await send(member, channel, 'what the heckin heck');
    expect(posted.status).toBe(200);
    const messageId = (posted.body as { id: string }).id;
    const log = await call(hearth, `/channels/${alerts}/messages`, { auth: guild.owner.token });
    const [alert] = log.body as Array<Record<string, unknown>>;
    expect(alert).toMatchObject({
      type: 24,
      channel_id: alerts,
      author: { id: member.id },
      content: 'what the heckin heck',
      embeds: [
        {
          type: 'auto_moderation_message',
          description: 'what the heckin heck',
          fields: expect.arrayContaining([
            { name: 'rule_name', value: 'watch words', inline: false },
            { name: 'channel_id', value: channel, inline: false },
            { name: 'keyword', value: 'heck*', inline: false },
            { name: 'keyword_matched_content', value: 'heckin', inline: false },
          ]),
        },
      ],
    });
    const execution = await owner.nextDispatch('AUTO_MODERATION_ACTION_EXECUTION');
    expect(execution.d).toEqual({
      guild_id: guild.id,
      action: { type: 2, metadata: { channel_id: alerts } },
      rule_id: rule.id,
      rule_trigger_type: 1,
      user_id: member.id,
      channel_id: channel,
      message_id: messageId,
      alert_system_message_id: alert?.['id'],
      content: 'what the heckin heck',
      matched_keyword: 'heck*',
      matched_content: 'heckin',
    });
    const entries = (
      await call(hearth, `/guilds/${guild.id}/audit-logs?action_type=144`, { auth: guild.owner.token })
    ).body as { audit_log_entries: unknown[] };
    expect(entries.audit_log_entries).toEqual([
      {
        id: expect.any(String),
        user_id: member.id,
        target_id: member.id,
        action_type: 144,
        options: {
          auto_moderation_rule_name: 'watch words',
          auto_moderation_rule_trigger_type: '1',
          channel_id: channel,
        },
      },
    ]);
    await owner.close();
  });

  it('an alert channel deleted since the rule was made takes no alert; the execution is still announced', async () => {
    const { guild, channel, member } = await setting();
    const alerts = await seedTestChannel(hearth, guild.id, { name: 'gone' });
    await createRule(hearth, guild, {
      trigger_metadata: { keyword_filter: ['heck'] },
      actions: [{ type: 2, metadata: { channel_id: alerts } }],
    });
    const deleted = await call(hearth, `/channels/${alerts}`, { method: 'DELETE', auth: guild.owner.token });
    expect(deleted.status).toBe(200);
    const owner = await identify(hearth, guild.owner.token);
    expect((await send(member, channel, 'heck')).status).toBe(200);
    const execution = (await owner.nextDispatch('AUTO_MODERATION_ACTION_EXECUTION')).d as Record<
      string,
      unknown
    >;
    expect(execution).toMatchObject({
      action: { type: 2, metadata: { channel_id: alerts } },
      content: 'heck',
    });
    expect(execution).not.toHaveProperty('alert_system_message_id');
    await owner.close();
  });

  it('TIMEOUT times the member out for duration_seconds; with BLOCK_MESSAGE the message is refused; 143 and 145 are audited', async () => {
    const { guild, channel, member } = await setting();
    await createRule(hearth, guild, {
      trigger_metadata: { keyword_filter: ['forbidden'] },
      actions: [
        { type: 1, metadata: { custom_message: 'not here' } },
        { type: 3, metadata: { duration_seconds: 600 } },
      ],
    });
    expect(await send(member, channel, 'forbidden')).toEqual(BLOCKED);
    const until = new Date(clock.now() + 600_000).toISOString();
    const read = await call(hearth, `/guilds/${guild.id}/members/${member.id}`, { auth: guild.owner.token });
    expect(read.body).toMatchObject({ communication_disabled_until: until });
    // Timed out, the member cannot send at all any more.
    expect(await send(member, channel, 'hello')).toMatchObject({ status: 403, body: { code: 50013 } });
    const log = (await call(hearth, `/guilds/${guild.id}/audit-logs`, { auth: guild.owner.token })).body as {
      audit_log_entries: Array<{ action_type: number; user_id: string }>;
    };
    const automod = log.audit_log_entries.filter((entry) => entry.action_type >= 143);
    expect(automod.map((entry) => [entry.action_type, entry.user_id])).toEqual([
      [145, member.id],
      [143, member.id],
    ]);
  });
});

describe('AUTO_MODERATION_ACTION_EXECUTION (intent AUTO_MODERATION_EXECUTION; content with MESSAGE_CONTENT)', () => {
  it('reaches MANAGE_GUILD bots with the intent, with content only for MESSAGE_CONTENT; nobody else', async () => {
    const { guild, channel, member } = await setting();
    const reader = await addTestBot(hearth, guild);
    const blind = await addTestBot(hearth, guild);
    const deaf = await addTestBot(hearth, guild);
    await grantTestRole(hearth, guild, PermissionFlags.ManageGuild, [
      reader.botUserId,
      blind.botUserId,
      deaf.botUserId,
    ]);
    await hearth.services.applications.adminUpdate(reader.id, {
      grant_flags: ['GatewayMessageContentLimited'],
    });
    const { AutoModerationExecution, MessageContent, GuildMessages } = GatewayIntents;
    const rule = await createRule(hearth, guild, { trigger_metadata: { keyword_filter: ['forbid*'] } });
    const withContent = await identify(hearth, reader.botToken, AutoModerationExecution | MessageContent);
    const withoutContent = await identify(hearth, blind.botToken, AutoModerationExecution);
    const withoutIntent = await identify(hearth, deaf.botToken, GuildMessages);
    const bystander = await identify(hearth, member.token);

    expect(await send(member, channel, 'that is forbidden!')).toEqual(BLOCKED);
    const expected = {
      guild_id: guild.id,
      action: { type: 1, metadata: {} },
      rule_id: rule.id,
      rule_trigger_type: 1,
      user_id: member.id,
      channel_id: channel,
      content: 'that is forbidden!',
      matched_keyword: 'forbid*',
      matched_content: 'forbidden',
    };
    expect((await withContent.nextDispatch('AUTO_MODERATION_ACTION_EXECUTION')).d).toEqual(expected);
    expect((await withoutContent.nextDispatch('AUTO_MODERATION_ACTION_EXECUTION')).d).toEqual({
      ...expected,
      content: '',
      matched_content: '',
    });
    for (const client of [withoutIntent, bystander]) {
      await barrier(hearth, client, guild);
      expect(dispatchTypes(client)).not.toContain('AUTO_MODERATION_ACTION_EXECUTION');
    }
    for (const client of [withContent, withoutContent, withoutIntent, bystander]) await client.close();
  });
});

describe('Thread titles pass the blocking rules: 200001 (Title was blocked by automatic moderation)', () => {
  const TITLE_BLOCKED = {
    status: 400,
    body: { code: 200001, message: 'Title was blocked by automatic moderation' },
  };

  it('refuses a thread started with a blocked name, a rename to one, and a forum post titled so; stores nothing', async () => {
    const { guild, channel, member } = await setting();
    const forum = await seedTestChannel(hearth, guild.id, { name: 'board', type: 15 });
    await createRule(hearth, guild, { trigger_metadata: { keyword_filter: ['forbidden'] } });
    const start = (name: string) =>
      call(hearth, `/channels/${channel}/threads`, {
        method: 'POST',
        auth: member.token,
        body: { name, type: 11 },
      });
    expect(await start('the Forbidden plan')).toEqual(TITLE_BLOCKED);
    const started = await start('the good plan');
    expect(started.status).toBe(201);
    const thread = (started.body as { id: string }).id;
    const rename = (name: string) =>
      call(hearth, `/channels/${thread}`, { method: 'PATCH', auth: member.token, body: { name } });
    expect(await rename('forbidden after all')).toEqual(TITLE_BLOCKED);
    expect(await rename('a better plan')).toMatchObject({ status: 200, body: { name: 'a better plan' } });
    const post = await call(hearth, `/channels/${forum}/threads`, {
      method: 'POST',
      auth: member.token,
      body: { name: 'forbidden post', message: { content: 'hello' } },
    });
    expect(post).toEqual(TITLE_BLOCKED);
    const active = await call(hearth, `/guilds/${guild.id}/threads/active`, { auth: member.token });
    expect((active.body as { threads: Array<{ name: string }> }).threads.map((t) => t.name)).toEqual([
      'a better plan',
    ]);
  });
});
