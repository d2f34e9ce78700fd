import {
  ALL_PERMISSIONS,
  DEFAULT_EVERYONE_PERMISSIONS,
  PermissionFlags,
  TIMED_OUT_PERMISSIONS,
} from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestMember,
  createTestGuild,
  grantTestRole,
  setEveryonePermissions,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  basePermissions,
  channelPermissions,
  DatedRules,
  type MemberPermissionInput,
  type Overwrite,
} from '../../src/domains/guilds/permissions.js';
import { call, MISSING_PERMISSIONS } from './core-helpers.js';

/** The permission computation of GUILDS.md §1.2, proven case by case, then once through HTTP. */

const {
  Administrator,
  ViewChannel,
  SendMessages,
  SendTTSMessages,
  MentionEveryone,
  AttachFiles,
  EmbedLinks,
  ReadMessageHistory,
  ManageMessages,
  ManageChannels,
  ManageThreads,
  KickMembers,
  BanMembers,
  AddReactions,
  PinMessages,
  BypassSlowmode,
  ManageGuildExpressions,
  CreateGuildExpressions,
  ManageEvents,
  CreateEvents,
  UseExternalApps,
} = PermissionFlags;

const GUILD = '1000';
const OWNER = '2000';
const USER = '3000';
const ROLE_A = '4001';
const ROLE_B = '4002';
const NOW = Date.parse('2026-03-01T00:00:00Z');
const TEXT =
  ViewChannel |
  SendMessages |
  ReadMessageHistory |
  SendTTSMessages |
  MentionEveryone |
  AttachFiles |
  EmbedLinks;

function member(overrides: Partial<MemberPermissionInput> = {}): MemberPermissionInput {
  return {
    guildId: GUILD,
    ownerId: OWNER,
    userId: USER,
    everyone: TEXT,
    roles: [],
    communicationDisabledUntil: null,
    ...overrides,
  };
}
const role = (id: string, permissions: bigint) => ({ id, permissions });
const everyoneOverwrite = (allow: bigint, deny: bigint): Overwrite => ({ id: GUILD, type: 0, allow, deny });
const roleOverwrite = (id: string, allow: bigint, deny: bigint): Overwrite => ({ id, type: 0, allow, deny });
const memberOverwrite = (id: string, allow: bigint, deny: bigint): Overwrite => ({
  id,
  type: 1,
  allow,
  deny,
});

describe('Base permissions (GUILDS.md §1.2 steps 1–4, 12)', () => {
  const cases: Array<[string, MemberPermissionInput, bigint]> = [
    ['the owner holds every permission', member({ userId: OWNER, everyone: 0n }), ALL_PERMISSIONS],
    ['a member without roles holds @everyone’s', member(), TEXT],
    [
      'roles are OR-ed onto @everyone',
      member({ roles: [role(ROLE_A, KickMembers), role(ROLE_B, BanMembers)] }),
      TEXT | KickMembers | BanMembers,
    ],
    [
      'ADMINISTRATOR on any role is every permission',
      member({ roles: [role(ROLE_A, Administrator)] }),
      ALL_PERMISSIONS,
    ],
    ['ADMINISTRATOR on @everyone is every permission', member({ everyone: Administrator }), ALL_PERMISSIONS],
    [
      'a timed-out member keeps only VIEW_CHANNEL and READ_MESSAGE_HISTORY',
      member({ roles: [role(ROLE_A, KickMembers)], communicationDisabledUntil: NOW + 60_000 }),
      ViewChannel | ReadMessageHistory,
    ],
    [
      'a timeout that has ended has no effect',
      member({ roles: [role(ROLE_A, KickMembers)], communicationDisabledUntil: NOW - 1 }),
      TEXT | KickMembers,
    ],
    ['a timeout ending exactly now has ended', member({ communicationDisabledUntil: NOW }), TEXT],
    [
      'administrators are exempt from timeouts',
      member({ roles: [role(ROLE_A, Administrator)], communicationDisabledUntil: NOW + 60_000 }),
      ALL_PERMISSIONS,
    ],
    [
      'the owner is exempt from timeouts',
      member({ userId: OWNER, communicationDisabledUntil: NOW + 60_000 }),
      ALL_PERMISSIONS,
    ],
  ];
  it.each(cases)('%s', (_clause, input, expected) => {
    expect(basePermissions(input, NOW)).toBe(expected);
  });
});

describe('Channel permissions: overwrites and implicit rules (GUILDS.md §1.2 steps 5–12)', () => {
  const cases: Array<[string, MemberPermissionInput, Overwrite[], bigint]> = [
    [
      'ADMINISTRATOR ignores every overwrite',
      member({ roles: [role(ROLE_A, Administrator)] }),
      [everyoneOverwrite(0n, ALL_PERMISSIONS), memberOverwrite(USER, 0n, ALL_PERMISSIONS)],
      ALL_PERMISSIONS,
    ],
    [
      'the owner ignores every overwrite',
      member({ userId: OWNER }),
      [everyoneOverwrite(0n, ALL_PERMISSIONS), memberOverwrite(OWNER, 0n, ALL_PERMISSIONS)],
      ALL_PERMISSIONS,
    ],
    ['no overwrites: the base', member(), [], TEXT],
    [
      'the @everyone overwrite denies, then allows',
      member(),
      [everyoneOverwrite(AddReactions, ReadMessageHistory)],
      (TEXT & ~ReadMessageHistory) | AddReactions,
    ],
    [
      'role overwrites aggregate: an allow on one role beats a deny on another',
      member({ roles: [role(ROLE_A, 0n), role(ROLE_B, 0n)] }),
      [
        everyoneOverwrite(0n, SendMessages),
        roleOverwrite(ROLE_A, 0n, SendMessages),
        roleOverwrite(ROLE_B, SendMessages, 0n),
      ],
      TEXT,
    ],
    [
      'a role overwrite deny beats the @everyone overwrite allow',
      member({ roles: [role(ROLE_A, 0n)] }),
      [everyoneOverwrite(ManageMessages, 0n), roleOverwrite(ROLE_A, 0n, ManageMessages)],
      TEXT,
    ],
    [
      'a role overwrite of a role the member lacks does nothing',
      member({ roles: [role(ROLE_A, 0n)] }),
      [roleOverwrite(ROLE_B, 0n, ReadMessageHistory)],
      TEXT,
    ],
    [
      'the member overwrite comes last: its deny beats a role allow',
      member({ roles: [role(ROLE_A, 0n)] }),
      [
        roleOverwrite(ROLE_A, ManageMessages, 0n),
        memberOverwrite(USER, 0n, ManageMessages | ReadMessageHistory),
      ],
      TEXT & ~ReadMessageHistory,
    ],
    [
      'the member overwrite allow beats a role deny',
      member({ roles: [role(ROLE_A, 0n)] }),
      [
        roleOverwrite(ROLE_A, 0n, ReadMessageHistory),
        memberOverwrite(USER, ReadMessageHistory | KickMembers, 0n),
      ],
      TEXT | KickMembers,
    ],
    ['another member’s overwrite does nothing', member(), [memberOverwrite('9999', 0n, ViewChannel)], TEXT],
    [
      'without VIEW_CHANNEL every permission in the channel is denied',
      member({ roles: [role(ROLE_A, KickMembers)] }),
      [everyoneOverwrite(0n, ViewChannel)],
      0n,
    ],
    [
      'without SEND_MESSAGES, MENTION_EVERYONE, SEND_TTS_MESSAGES, ATTACH_FILES and EMBED_LINKS go too',
      member(),
      [everyoneOverwrite(0n, SendMessages)],
      ViewChannel | ReadMessageHistory,
    ],
    [
      'a timed-out member keeps only VIEW_CHANNEL and READ_MESSAGE_HISTORY whatever the overwrites allow',
      member({ communicationDisabledUntil: NOW + 1 }),
      [memberOverwrite(USER, SendMessages | ManageMessages, 0n)],
      ViewChannel | ReadMessageHistory,
    ],
    [
      'a timed-out member denied VIEW_CHANNEL sees nothing',
      member({ communicationDisabledUntil: NOW + 1 }),
      [everyoneOverwrite(0n, ViewChannel)],
      0n,
    ],
  ];
  it.each(cases)('%s', (_clause, input, overwrites, expected) => {
    expect(channelPermissions(input, overwrites, NOW)).toBe(expected);
  });
});

describe('Dated rules of 23 February 2026 (seed, Versioning; GUILDS.md §1.1)', () => {
  const BEFORE = Date.parse('2026-02-22T23:59:59.999Z');
  const AFTER = Date.parse('2026-02-23T00:00:00Z');
  const cases: Array<[string, () => boolean, boolean]> = [
    ['pin: MANAGE_MESSAGES suffices before the date', () => DatedRules.canPin(ManageMessages, BEFORE), true],
    [
      'pin: MANAGE_MESSAGES no longer suffices from the date',
      () => DatedRules.canPin(ManageMessages, AFTER),
      false,
    ],
    ['pin: PIN_MESSAGES before the date', () => DatedRules.canPin(PinMessages, BEFORE), true],
    ['pin: PIN_MESSAGES from the date', () => DatedRules.canPin(PinMessages, AFTER), true],
    ['pin: neither bit, never', () => DatedRules.canPin(SendMessages, BEFORE), false],
    ...([ManageMessages, ManageChannels, ManageThreads] as const).flatMap(
      (bit): Array<[string, () => boolean, boolean]> => [
        [
          `slowmode: bit ${bit} bypasses before the date`,
          () => DatedRules.bypassesSlowmode(bit, BEFORE, false),
          true,
        ],
        [
          `slowmode: bit ${bit} no longer bypasses from the date`,
          () => DatedRules.bypassesSlowmode(bit, AFTER, false),
          false,
        ],
      ],
    ),
    [
      'slowmode: BYPASS_SLOWMODE bypasses from the date',
      () => DatedRules.bypassesSlowmode(BypassSlowmode, AFTER, false),
      true,
    ],
    [
      'slowmode: BYPASS_SLOWMODE bypasses before the date',
      () => DatedRules.bypassesSlowmode(BypassSlowmode, BEFORE, false),
      true,
    ],
    ['slowmode: bots are never subject to it', () => DatedRules.bypassesSlowmode(0n, AFTER, true), true],
    [
      'slowmode: a user without bits is subject to it',
      () => DatedRules.bypassesSlowmode(0n, BEFORE, false),
      false,
    ],
    [
      'expressions: a bot with MANAGE_GUILD_EXPRESSIONS only may create before the date',
      () => DatedRules.canCreateExpressions(ManageGuildExpressions, BEFORE, true),
      true,
    ],
    [
      'expressions: a bot needs CREATE_GUILD_EXPRESSIONS from the date',
      () => DatedRules.canCreateExpressions(ManageGuildExpressions, AFTER, true),
      false,
    ],
    [
      'expressions: a bot with CREATE_GUILD_EXPRESSIONS may create from the date',
      () => DatedRules.canCreateExpressions(CreateGuildExpressions, AFTER, true),
      true,
    ],
    [
      'expressions: a user with MANAGE_GUILD_EXPRESSIONS still may from the date',
      () => DatedRules.canCreateExpressions(ManageGuildExpressions, AFTER, false),
      true,
    ],
    [
      'expressions: without either bit, nobody may',
      () => DatedRules.canCreateExpressions(0n, BEFORE, false),
      false,
    ],
    [
      'events: a bot with MANAGE_EVENTS only may create before the date',
      () => DatedRules.canCreateEvents(ManageEvents, BEFORE, true),
      true,
    ],
    [
      'events: a bot needs CREATE_EVENTS from the date',
      () => DatedRules.canCreateEvents(ManageEvents, AFTER, true),
      false,
    ],
    [
      'events: a bot with CREATE_EVENTS may from the date',
      () => DatedRules.canCreateEvents(CreateEvents, AFTER, true),
      true,
    ],
    [
      'events: a user with MANAGE_EVENTS still may from the date',
      () => DatedRules.canCreateEvents(ManageEvents, AFTER, false),
      true,
    ],
  ];
  it.each(cases)('%s', (_clause, rule, expected) => {
    expect(rule()).toBe(expected);
  });

  it('USE_EXTERNAL_APPS is on in the @everyone default (seed, Versioning)', () => {
    expect(DEFAULT_EVERYONE_PERMISSIONS & UseExternalApps).toBe(UseExternalApps);
  });
});

describe('Permissions through HTTP: one computation serves every route', () => {
  let hearth: TestHearth;
  const clock = new ManualClock('2026-03-01T00:00:00Z');
  beforeAll(async () => {
    hearth = await startHearth({}, clock);
  });
  afterAll(() => hearth.close());

  it('a role grants MANAGE_GUILD, a timeout takes it away until it ends, /users/@me/guilds reports the same', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    await setEveryonePermissions(hearth, guild, TEXT);
    await grantTestRole(hearth, guild, PermissionFlags.ManageGuild, [member.id]);
    const patch = () =>
      call(hearth, `/guilds/${guild.id}`, {
        auth: member.token,
        method: 'PATCH',
        body: { description: 'x' },
      });
    const listed = async () =>
      (
        (await call(hearth, '/users/@me/guilds', { auth: member.token })).body as Array<{
          permissions: string;
        }>
      )[0]?.permissions;

    expect((await patch()).status).toBe(200);
    expect(await listed()).toBe((TEXT | PermissionFlags.ManageGuild).toString());

    await hearth.storage.db
      .updateTable('guild_members')
      .set({ communication_disabled_until: clock.now() + 60_000 })
      .where('guild_id', '=', guild.id)
      .where('user_id', '=', member.id)
      .execute();
    expect(await patch()).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    expect(await listed()).toBe(((TEXT | PermissionFlags.ManageGuild) & TIMED_OUT_PERMISSIONS).toString());

    clock.advance(60_000);
    expect((await patch()).status).toBe(200);
  });
});
