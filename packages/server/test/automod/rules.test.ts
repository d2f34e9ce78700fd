import { GatewayIntents, AutoModerationLimits as L, PermissionFlags } from '@hearth/protocol';
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
import { createPlayer } from '../../../../test-support/oauth.js';
import {
  call,
  invalidForm,
  MISSING_ACCESS,
  MISSING_PERMISSIONS,
  UNKNOWN_GUILD,
} from '../guilds/core-helpers.js';
import { barrier, createRule, dispatchTypes, identify, ruleBody, rulesPath } from './support.js';

let hearth: TestHearth;

beforeAll(async () => {
  hearth = await startHearth({}, new ManualClock('2026-03-01T00:00:00Z'));
});
afterAll(() => hearth.close());

const UNKNOWN_RULE = { code: 0, message: '404: Not Found' };
const maxLength = (max: number) => ({
  code: 'BASE_TYPE_MAX_LENGTH',
  message: `Must be ${max} or fewer in length.`,
});
const INVALID = { code: 'BASE_TYPE_INVALID', message: 'Invalid value.' };
const REQUIRED = { code: 'BASE_TYPE_REQUIRED', message: 'This field is required' };

const post = (guild: TestGuild, body: unknown, auth = guild.owner.token) =>
  call(hearth, rulesPath(guild.id), { method: 'POST', auth, body });

/** POST of `ruleBody(overrides)` must be refused with 50035 and exactly `errors`. */
async function refused(guild: TestGuild, overrides: Record<string, unknown>, errors: unknown) {
  expect(await post(guild, ruleBody(overrides))).toEqual({ status: 400, body: invalidForm(errors) });
}

const words = (n: number, length = 8) =>
  Array.from({ length: n }, (_, i) => `w${String(i).padStart(length - 1, '0')}`);

describe('Create Auto Moderation Rule (POST /guilds/{guild.id}/auto-moderation/rules)', () => {
  it('answers 200 with the rule object as the interface has it, and Get / List read it back', async () => {
    const guild = await createTestGuild(hearth);
    const alerts = await seedTestChannel(hearth, guild.id, { name: 'mod-log' });
    const exemptChannel = await seedTestChannel(hearth, guild.id);
    const exemptRole = await grantTestRole(hearth, guild, 0n, []);
    const { status, body } = await post(guild, {
      name: 'Keyword Filter 1',
      event_type: 1,
      trigger_type: 1,
      trigger_metadata: {
        keyword_filter: ['cat*', '*dog', '*ana*', 'i like c++'],
        regex_patterns: ['(b|c)at'],
        allow_list: ['catalog'],
      },
      actions: [
        { type: 1, metadata: { custom_message: 'Please keep it civil' } },
        { type: 2, metadata: { channel_id: alerts } },
        { type: 3, metadata: { duration_seconds: 60 } },
      ],
      enabled: true,
      exempt_roles: [exemptRole],
      exempt_channels: [exemptChannel],
    });
    expect(status).toBe(200);
    const rule = body as { id: string };
    expect(rule).toEqual({
      id: expect.stringMatching(/^\d+$/),
      guild_id: guild.id,
      name: 'Keyword Filter 1',
      creator_id: guild.owner.id,
      event_type: 1,
      trigger_type: 1,
      trigger_metadata: {
        keyword_filter: ['cat*', '*dog', '*ana*', 'i like c++'],
        regex_patterns: ['(b|c)at'],
        allow_list: ['catalog'],
      },
      actions: [
        { type: 1, metadata: { custom_message: 'Please keep it civil' } },
        { type: 2, metadata: { channel_id: alerts } },
        { type: 3, metadata: { duration_seconds: 60 } },
      ],
      enabled: true,
      exempt_roles: [exemptRole],
      exempt_channels: [exemptChannel],
    });
    const auth = guild.owner.token;
    expect(await call(hearth, `${rulesPath(guild.id)}/${rule.id}`, { auth })).toEqual({
      status: 200,
      body: rule,
    });
    expect(await call(hearth, rulesPath(guild.id), { auth })).toEqual({ status: 200, body: [rule] });
  });

  it('gives each trigger type its own metadata, and defaults enabled to false and the exempt lists to []', async () => {
    const guild = await createTestGuild(hearth);
    const base = { name: 'r', event_type: 1, actions: [{ type: 1 }] };
    const preset = await post(guild, { ...base, trigger_type: 4, trigger_metadata: { presets: [1, 3, 1] } });
    expect(preset.body).toMatchObject({
      trigger_type: 4,
      trigger_metadata: { presets: [1, 3], allow_list: [] },
      enabled: false,
      exempt_roles: [],
      exempt_channels: [],
      actions: [{ type: 1, metadata: {} }],
    });
    const spam = await post(guild, { ...base, trigger_type: 3, trigger_metadata: { keyword_filter: ['x'] } });
    expect(spam.body).toMatchObject({ trigger_type: 3, trigger_metadata: {} });
    expect((spam.body as { trigger_metadata: object }).trigger_metadata).toEqual({});
    const mentions = await post(guild, {
      ...base,
      trigger_type: 5,
      trigger_metadata: { mention_total_limit: 5 },
    });
    expect((mentions.body as { trigger_metadata: object }).trigger_metadata).toEqual({
      mention_total_limit: 5,
      mention_raid_protection_enabled: false,
    });
  });

  it('needs MANAGE_GUILD: 50013 without it, 50001 for non-members, 10004 for an unknown guild', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    expect(await post(guild, ruleBody(), member.token)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    expect(await call(hearth, rulesPath(guild.id), { auth: member.token })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    const stranger = await createPlayer(hearth);
    expect(await post(guild, ruleBody(), stranger.token)).toEqual({ status: 403, body: MISSING_ACCESS });
    expect(await call(hearth, rulesPath('123456789012345678'), { auth: guild.owner.token })).toEqual({
      status: 404,
      body: UNKNOWN_GUILD,
    });
    const manager = await addTestMember(hearth, guild);
    await grantTestRole(hearth, guild, PermissionFlags.ManageGuild, [manager.id]);
    expect((await post(guild, ruleBody(), manager.token)).status).toBe(200);
  });

  it('refuses a TIMEOUT action from a member without MODERATE_MEMBERS (50013), allows it with it', async () => {
    const guild = await createTestGuild(hearth);
    const manager = await addTestMember(hearth, guild);
    const roleId = await grantTestRole(hearth, guild, PermissionFlags.ManageGuild, [manager.id]);
    const timeout = ruleBody({ actions: [{ type: 3, metadata: { duration_seconds: 60 } }] });
    expect(await post(guild, timeout, manager.token)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    await hearth.storage.db
      .updateTable('guild_roles')
      .set({ permissions: (PermissionFlags.ManageGuild | PermissionFlags.ModerateMembers).toString() })
      .where('id', '=', roleId)
      .execute();
    expect((await post(guild, timeout, manager.token)).status).toBe(200);
  });

  it('refuses bodies of the wrong shape with 50035 naming each field', async () => {
    const guild = await createTestGuild(hearth);
    expect(await post(guild, { name: 5, event_type: '1', trigger_type: 1, actions: {} })).toEqual({
      status: 400,
      body: invalidForm({
        name: { _errors: [{ code: 'BASE_TYPE_STRING', message: 'Could not interpret "5" as string.' }] },
        event_type: { _errors: [{ code: 'NUMBER_TYPE_COERCE', message: 'Value "1" is not int.' }] },
        actions: {
          _errors: [{ code: 'LIST_TYPE_CONVERT', message: 'Only iterables may be used in a ListType' }],
        },
      }),
    });
    expect(await post(guild, {})).toEqual({
      status: 400,
      body: invalidForm({
        name: { _errors: [REQUIRED] },
        event_type: { _errors: [REQUIRED] },
        actions: { _errors: [REQUIRED] },
        trigger_type: { _errors: [REQUIRED] },
      }),
    });
    const choices = (values: number[]) => ({
      _errors: [
        {
          code: 'BASE_TYPE_CHOICES',
          message: `Value must be one of (${values.map((v) => `'${v}'`).join(', ')}).`,
        },
      ],
    });
    // MEMBER_PROFILE (6) is not enforced by Hearth, so it is refused rather than stored and never applied.
    await refused(guild, { trigger_type: 6 }, { trigger_type: choices([1, 3, 4, 5]) });
    await refused(guild, { event_type: 2 }, { event_type: choices([1]) });
    await refused(
      guild,
      { actions: [{ type: 3, metadata: { duration_seconds: 1 } }], trigger_type: 3 },
      {
        actions: { 0: { type: choices([1, 2]) } },
      },
    );
    await refused(guild, { actions: [{ type: 4 }] }, { actions: { 0: { type: choices([1, 2, 3]) } } });
    await refused(
      guild,
      { actions: [{ type: 2 }] },
      { actions: { 0: { metadata: { channel_id: { _errors: [REQUIRED] } } } } },
    );
    await refused(
      guild,
      { actions: [{ type: 3, metadata: {} }] },
      {
        actions: { 0: { metadata: { duration_seconds: { _errors: [REQUIRED] } } } },
      },
    );
    await refused(
      guild,
      { trigger_type: 5, trigger_metadata: {} },
      {
        trigger_metadata: { mention_total_limit: { _errors: [REQUIRED] } },
      },
    );
  });

  it('refuses references outside the guild: alert channels, exempt roles and channels of another guild', async () => {
    const guild = await createTestGuild(hearth);
    const other = await createTestGuild(hearth);
    const foreignChannel = await seedTestChannel(hearth, other.id);
    const foreignRole = await grantTestRole(hearth, other, 0n, []);
    const category = await seedTestChannel(hearth, guild.id, { type: 4 });
    await refused(
      guild,
      { actions: [{ type: 2, metadata: { channel_id: foreignChannel } }] },
      {
        actions: { 0: { metadata: { channel_id: { _errors: [INVALID] } } } },
      },
    );
    // A category holds no messages: no alert can be posted there.
    await refused(
      guild,
      { actions: [{ type: 2, metadata: { channel_id: category } }] },
      {
        actions: { 0: { metadata: { channel_id: { _errors: [INVALID] } } } },
      },
    );
    await refused(
      guild,
      { exempt_roles: [guild.id, foreignRole] },
      { exempt_roles: { 1: { _errors: [INVALID] } } },
    );
    await refused(
      guild,
      { exempt_channels: [foreignChannel] },
      { exempt_channels: { 0: { _errors: [INVALID] } } },
    );
    expect((await post(guild, ruleBody({ exempt_channels: [category] }))).status).toBe(200);
  });

  it('refuses keywords of wildcards alone and regexes that do not compile or that Rust regex lacks', async () => {
    const guild = await createTestGuild(hearth);
    await refused(
      guild,
      { trigger_metadata: { keyword_filter: ['ok', '**'] } },
      {
        trigger_metadata: { keyword_filter: { 1: { _errors: [INVALID] } } },
      },
    );
    const badRegex = { code: 'AUTO_MODERATION_INVALID_REGEX', message: 'Invalid regex pattern' };
    for (const pattern of ['(unclosed', 'a(?=b)', '(x)\\1', '(a+)+$', '(?:ab*)*c']) {
      await refused(
        guild,
        { trigger_metadata: { regex_patterns: ['fine', pattern] } },
        {
          trigger_metadata: { regex_patterns: { 1: { _errors: [badRegex] } } },
        },
      );
    }
    expect(
      (await post(guild, ruleBody({ trigger_metadata: { regex_patterns: ['(?i)^(b|c)at+s?$', 'a{2,3}'] } })))
        .status,
    ).toBe(200);
  });
});

describe('AutoMod limits: each at its edge and one past it (DOCS: Trigger Metadata Field Limits)', () => {
  it('name ≤ 100, actions 1–5, custom_message ≤ 150, duration_seconds ≤ 2419200', async () => {
    const guild = await createTestGuild(hearth);
    const edge = await post(
      guild,
      ruleBody({
        name: 'n'.repeat(L.ruleNameMax),
        actions: [
          { type: 1, metadata: { custom_message: 'm'.repeat(L.customMessage) } },
          { type: 1 },
          { type: 1 },
          { type: 1 },
          { type: 3, metadata: { duration_seconds: L.timeoutMaxSeconds } },
        ],
      }),
    );
    expect(edge.status).toBe(200);
    await refused(
      guild,
      { name: 'n'.repeat(L.ruleNameMax + 1) },
      {
        name: {
          _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 100 in length.' }],
        },
      },
    );
    await refused(
      guild,
      { actions: Array.from({ length: 6 }, () => ({ type: 1 })) },
      { actions: { _errors: [maxLength(5)] } },
    );
    await refused(
      guild,
      { actions: [] },
      {
        actions: { _errors: [{ code: 'BASE_TYPE_MIN_LENGTH', message: 'Must be 1 or more in length.' }] },
      },
    );
    await refused(
      guild,
      { actions: [{ type: 1, metadata: { custom_message: 'm'.repeat(L.customMessage + 1) } }] },
      {
        actions: { 0: { metadata: { custom_message: { _errors: [maxLength(150)] } } } },
      },
    );
    await refused(
      guild,
      { actions: [{ type: 3, metadata: { duration_seconds: L.timeoutMaxSeconds + 1 } }] },
      {
        actions: {
          0: {
            metadata: {
              duration_seconds: {
                _errors: [
                  { code: 'NUMBER_TYPE_MAX', message: 'int value should be less than or equal to 2419200.' },
                ],
              },
            },
          },
        },
      },
    );
  });

  it('keyword_filter ≤ 1000 of ≤ 60 characters, regex_patterns ≤ 10 of ≤ 260, allow_list ≤ 100 (KEYWORD)', async () => {
    const guild = await createTestGuild(hearth);
    const edge = await post(
      guild,
      ruleBody({
        trigger_metadata: {
          keyword_filter: [...words(L.keywordFilter - 1), 'k'.repeat(L.keywordLength)],
          regex_patterns: [...words(L.regexPatterns - 1), 'r'.repeat(L.regexLength)],
          allow_list: [...words(L.allowList - 1), 'a'.repeat(L.allowListLength)],
        },
      }),
    );
    expect(edge.status).toBe(200);
    const meta = (trigger_metadata: Record<string, unknown>) => ({ trigger_metadata });
    await refused(guild, meta({ keyword_filter: words(L.keywordFilter + 1) }), {
      trigger_metadata: { keyword_filter: { _errors: [maxLength(1000)] } },
    });
    await refused(guild, meta({ keyword_filter: ['k'.repeat(L.keywordLength + 1)] }), {
      trigger_metadata: {
        keyword_filter: {
          0: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 60 in length.' }] },
        },
      },
    });
    await refused(guild, meta({ regex_patterns: words(L.regexPatterns + 1) }), {
      trigger_metadata: { regex_patterns: { _errors: [maxLength(10)] } },
    });
    await refused(guild, meta({ regex_patterns: ['r'.repeat(L.regexLength + 1)] }), {
      trigger_metadata: {
        regex_patterns: {
          0: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 260 in length.' }] },
        },
      },
    });
    await refused(guild, meta({ allow_list: words(L.allowList + 1) }), {
      trigger_metadata: { allow_list: { _errors: [maxLength(100)] } },
    });
  });

  it('allow_list ≤ 1000 for KEYWORD_PRESET; mention_total_limit ≤ 50', async () => {
    const guild = await createTestGuild(hearth);
    const preset = (allow_list: string[]) =>
      ruleBody({ trigger_type: 4, trigger_metadata: { presets: [1], allow_list } });
    await refused(
      guild,
      { trigger_type: 4, trigger_metadata: { presets: [1], allow_list: words(L.allowListPreset + 1) } },
      {
        trigger_metadata: { allow_list: { _errors: [maxLength(1000)] } },
      },
    );
    expect((await post(guild, preset(words(L.allowListPreset)))).status).toBe(200);
    await refused(
      guild,
      { trigger_type: 5, trigger_metadata: { mention_total_limit: L.mentionTotalLimitMax + 1 } },
      {
        trigger_metadata: {
          mention_total_limit: {
            _errors: [{ code: 'NUMBER_TYPE_MAX', message: 'int value should be less than or equal to 50.' }],
          },
        },
      },
    );
    const mentions = await post(
      guild,
      ruleBody({ trigger_type: 5, trigger_metadata: { mention_total_limit: 50 } }),
    );
    expect(mentions.status).toBe(200);
  });

  it('exempt_roles ≤ 20, exempt_channels ≤ 50', async () => {
    const guild = await createTestGuild(hearth);
    const roles: string[] = [];
    for (let i = 0; i < L.exemptRoles + 1; i++) roles.push(await grantTestRole(hearth, guild, 0n, []));
    const channels: string[] = [];
    for (let i = 0; i < L.exemptChannels + 1; i++) channels.push(await seedTestChannel(hearth, guild.id));
    const edge = await post(
      guild,
      ruleBody({
        exempt_roles: roles.slice(0, L.exemptRoles),
        exempt_channels: channels.slice(0, L.exemptChannels),
      }),
    );
    expect(edge.status).toBe(200);
    await refused(guild, { exempt_roles: roles }, { exempt_roles: { _errors: [maxLength(20)] } });
    await refused(guild, { exempt_channels: channels }, { exempt_channels: { _errors: [maxLength(50)] } });
  });

  it('rules per guild: 6 KEYWORD, 1 each of SPAM, KEYWORD_PRESET and MENTION_SPAM; the next is refused at the root', async () => {
    const guild = await createTestGuild(hearth);
    const tooMany = (type: number, max: number) => ({
      status: 400,
      body: invalidForm({
        _errors: [
          {
            code: 'AUTO_MODERATION_MAX_RULES_OF_TYPE_EXCEEDED',
            message: `Maximum number of rules with trigger type ${type} is ${max}`,
          },
        ],
      }),
    });
    for (let i = 0; i < L.keywordRules; i++) await createRule(hearth, guild, { name: `k${i}` });
    expect(await post(guild, ruleBody())).toEqual(tooMany(1, 6));
    const others = {
      3: {},
      4: { presets: [2] },
      5: { mention_total_limit: 3 },
    } as const;
    for (const [type, trigger_metadata] of Object.entries(others)) {
      const body = ruleBody({ trigger_type: Number(type), trigger_metadata });
      expect((await post(guild, body)).status).toBe(200);
      expect(await post(guild, body)).toEqual(tooMany(Number(type), 1));
    }
    // Deleting one makes room again.
    const [first] = (await call(hearth, rulesPath(guild.id), { auth: guild.owner.token })).body as Array<{
      id: string;
    }>;
    await call(hearth, `${rulesPath(guild.id)}/${first?.id}`, { method: 'DELETE', auth: guild.owner.token });
    expect((await post(guild, ruleBody())).status).toBe(200);
  });
});

describe('Modify and Delete Auto Moderation Rule', () => {
  it('PATCH changes only what it names; the trigger type cannot change; the metadata is replaced whole', async () => {
    const guild = await createTestGuild(hearth);
    const rule = await createRule(hearth, guild, {
      trigger_metadata: { keyword_filter: ['a'], allow_list: ['b'] },
    });
    const path = `${rulesPath(guild.id)}/${rule.id}`;
    const auth = guild.owner.token;
    const renamed = await call(hearth, path, {
      method: 'PATCH',
      auth,
      body: { name: 'renamed', enabled: false },
    });
    expect(renamed).toEqual({ status: 200, body: { ...rule, name: 'renamed', enabled: false } });
    const meta = await call(hearth, path, {
      method: 'PATCH',
      auth,
      body: { trigger_metadata: { regex_patterns: ['x+'] } },
    });
    expect((meta.body as { trigger_metadata: unknown }).trigger_metadata).toEqual({
      keyword_filter: [],
      regex_patterns: ['x+'],
      allow_list: [],
    });
    expect(await call(hearth, path, { method: 'PATCH', auth, body: { trigger_type: 3 } })).toEqual({
      status: 400,
      body: invalidForm({
        trigger_type: { _errors: [{ code: 'BASE_TYPE_CHOICES', message: "Value must be one of ('1')." }] },
      }),
    });
    expect(await call(hearth, path, { method: 'PATCH', auth, body: { actions: [] } })).toEqual({
      status: 400,
      body: invalidForm({
        actions: { _errors: [{ code: 'BASE_TYPE_MIN_LENGTH', message: 'Must be 1 or more in length.' }] },
      }),
    });
    expect((await call(hearth, path, { auth })).body).toMatchObject({
      name: 'renamed',
      trigger_metadata: { regex_patterns: ['x+'] },
    });
  });

  it('DELETE answers 204, then the rule is 10066; another guild’s rule is 10066 too', async () => {
    const guild = await createTestGuild(hearth);
    const other = await createTestGuild(hearth);
    const rule = await createRule(hearth, guild);
    const auth = guild.owner.token;
    expect(await call(hearth, `${rulesPath(other.id)}/${rule.id}`, { auth: other.owner.token })).toEqual({
      status: 404,
      body: UNKNOWN_RULE,
    });
    const member = await addTestMember(hearth, guild);
    expect(
      await call(hearth, `${rulesPath(guild.id)}/${rule.id}`, { method: 'DELETE', auth: member.token }),
    ).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    expect(await call(hearth, `${rulesPath(guild.id)}/${rule.id}`, { method: 'DELETE', auth })).toEqual({
      status: 204,
      body: undefined,
    });
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      expect(
        await call(hearth, `${rulesPath(guild.id)}/${rule.id}`, {
          method,
          auth,
          ...(method === 'PATCH' ? { body: {} } : {}),
        }),
      ).toEqual({ status: 404, body: UNKNOWN_RULE });
    }
  });

  it('each change leaves its audit entry (140, 141, 142) with the reason given', async () => {
    const guild = await createTestGuild(hearth);
    const auth = guild.owner.token;
    const headers = { 'x-audit-log-reason': 'tidy%20up' };
    const created = await call(hearth, rulesPath(guild.id), {
      method: 'POST',
      auth,
      headers,
      body: ruleBody({ name: 'one' }),
    });
    const id = (created.body as { id: string }).id;
    await call(hearth, `${rulesPath(guild.id)}/${id}`, { method: 'PATCH', auth, body: { name: 'two' } });
    await call(hearth, `${rulesPath(guild.id)}/${id}`, { method: 'DELETE', auth });
    const log = (await call(hearth, `/guilds/${guild.id}/audit-logs`, { auth })).body as {
      audit_log_entries: Array<{
        action_type: number;
        target_id: string;
        user_id: string;
        reason?: string;
        changes?: unknown[];
      }>;
    };
    const entries = log.audit_log_entries.filter((entry) => entry.target_id === id);
    expect(entries.map((entry) => entry.action_type)).toEqual([142, 141, 140]);
    expect(entries[2]).toMatchObject({ user_id: guild.owner.id, reason: 'tidy up' });
    expect(entries[2]?.changes).toContainEqual({ key: 'name', new_value: 'one' });
    expect(entries[1]?.changes).toEqual([{ key: 'name', old_value: 'one', new_value: 'two' }]);
    expect(entries[0]?.changes).toContainEqual({ key: 'name', old_value: 'two' });
  });
});

describe('AUTO_MODERATION_RULE_CREATE / UPDATE / DELETE (intent AUTO_MODERATION_CONFIGURATION)', () => {
  it('reach bots with the intent and MANAGE_GUILD, not bots without the intent, nor members without MANAGE_GUILD', async () => {
    const guild = await createTestGuild(hearth);
    const withIntent = await addTestBot(hearth, guild);
    const withoutIntent = await addTestBot(hearth, guild);
    const { ManageGuild, ViewAuditLog } = PermissionFlags;
    await grantTestRole(hearth, guild, ManageGuild | ViewAuditLog, [
      withIntent.botUserId,
      withoutIntent.botUserId,
    ]);
    const member = await addTestMember(hearth, guild);
    const { AutoModerationConfiguration, GuildModeration } = GatewayIntents;
    const bot = await identify(hearth, withIntent.botToken, AutoModerationConfiguration);
    const other = await identify(hearth, withoutIntent.botToken, GuildModeration);
    const person = await identify(hearth, member.token);
    const owner = await identify(hearth, guild.owner.token);

    const rule = await createRule(hearth, guild);
    const path = `${rulesPath(guild.id)}/${rule.id}`;
    await call(hearth, path, { method: 'PATCH', auth: guild.owner.token, body: { name: 'new name' } });
    await call(hearth, path, { method: 'DELETE', auth: guild.owner.token });

    expect((await bot.nextDispatch('AUTO_MODERATION_RULE_CREATE')).d).toEqual(rule);
    expect((await bot.nextDispatch('AUTO_MODERATION_RULE_UPDATE')).d).toEqual({ ...rule, name: 'new name' });
    expect((await bot.nextDispatch('AUTO_MODERATION_RULE_DELETE')).d).toEqual({ ...rule, name: 'new name' });
    expect((await owner.nextDispatch('AUTO_MODERATION_RULE_DELETE')).d).toMatchObject({ id: rule.id });
    for (const client of [other, person]) {
      await barrier(hearth, client, guild);
      expect(dispatchTypes(client).filter((t) => t.startsWith('AUTO_MODERATION'))).toEqual([]);
    }
    // The bot without the configuration intent still gets the audit entries its GUILD_MODERATION asks for.
    expect(dispatchTypes(other)).toContain('GUILD_AUDIT_LOG_ENTRY_CREATE');
    for (const client of [bot, other, person, owner]) await client.close();
  });
});
