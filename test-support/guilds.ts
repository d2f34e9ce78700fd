import type { TestHearth } from './hearth.js';
import { createGame, createPlayer, type TestGame } from './oauth.js';

/**
 * Guild suites' fixtures: a guild with its owner, members and a bot, and roles granted directly in storage
 * (setup only; the behaviour under test always goes through HTTP or the gateway).
 */
export interface TestGuild {
  id: string;
  /** The owner's user id and bare session token (`auth: owner.token`). */
  owner: { id: string; token: string };
}

let counter = 0;

export async function createTestGuild(hearth: TestHearth, name = `Guild ${++counter}`): Promise<TestGuild> {
  const owner = await createPlayer(hearth);
  const { id } = await hearth.services.guilds.createGuild(owner.user.id, { name });
  return { id, owner: { id: owner.user.id, token: owner.token } };
}

/** A new user who joined the guild: id and bare session token. */
export async function addTestMember(
  hearth: TestHearth,
  guild: TestGuild,
): Promise<{ id: string; token: string }> {
  const member = await createPlayer(hearth);
  await hearth.services.guilds.addMember(guild.id, member.user.id);
  return { id: member.user.id, token: member.token };
}

/** An application whose bot user is a member of the guild (`auth: \`Bot ${game.botToken}\``). */
export async function addTestBot(hearth: TestHearth, guild: TestGuild): Promise<TestGame> {
  const game = await createGame(hearth);
  await hearth.services.guilds.addMember(guild.id, game.botUserId);
  return game;
}

/** A role holding `permissions` at `position`, given to each of `userIds`; answers its id. */
export async function grantTestRole(
  hearth: TestHearth,
  guild: TestGuild,
  permissions: bigint,
  userIds: readonly string[],
  position = 1,
): Promise<string> {
  const id = String(BigInt(guild.id) + BigInt(++counter * 4096));
  const db = hearth.storage.db;
  await db
    .insertInto('guild_roles')
    .values({
      id,
      guild_id: guild.id,
      name: `role ${counter}`,
      permissions: permissions.toString(),
      color: 0,
      secondary_color: null,
      tertiary_color: null,
      hoist: 0,
      icon: null,
      unicode_emoji: null,
      position,
      managed: 0,
      mentionable: 0,
      bot_id: null,
      integration_id: null,
      created_at: hearth.clock.now(),
    })
    .execute();
  for (const userId of userIds) {
    await db
      .insertInto('guild_member_roles')
      .values({ guild_id: guild.id, user_id: userId, role_id: id })
      .execute();
  }
  return id;
}

/** Sets the @everyone role's permissions. */
export async function setEveryonePermissions(hearth: TestHearth, guild: TestGuild, permissions: bigint) {
  await hearth.storage.db
    .updateTable('guild_roles')
    .set({ permissions: permissions.toString() })
    .where('id', '=', guild.id)
    .execute();
}

/** A channel row of the guild (setup only), with optional overwrites; answers its id. */
export async function seedTestChannel(
  hearth: TestHearth,
  guildId: string,
  options: {
    type?: number;
    name?: string;
    id?: string;
    userLimit?: number;
    overwrites?: ReadonlyArray<{ id: string; type: number; allow: bigint; deny: bigint }>;
  } = {},
): Promise<string> {
  const id = options.id ?? String(BigInt(guildId) + BigInt(++counter * 4096 + 1));
  const voice = options.type === 2 || options.type === 13;
  await hearth.storage.db
    .insertInto('channels')
    .values({
      id,
      guild_id: guildId,
      type: options.type ?? 0,
      name: options.name ?? `channel-${id}`,
      position: 0,
      parent_id: null,
      topic: null,
      nsfw: 0,
      rate_limit_per_user: 0,
      bitrate: voice ? 64000 : null,
      user_limit: voice ? (options.userLimit ?? 0) : null,
      rtc_region: null,
      video_quality_mode: null,
      default_auto_archive_duration: null,
      default_thread_rate_limit_per_user: null,
      last_message_id: null,
      last_pin_timestamp: null,
      available_tags: null,
      default_reaction_emoji: null,
      default_sort_order: null,
      default_forum_layout: null,
      created_at: hearth.clock.now(),
    })
    .execute();
  for (const overwrite of options.overwrites ?? []) {
    await hearth.storage.db
      .insertInto('channel_overwrites')
      .values({
        channel_id: id,
        target_id: overwrite.id,
        type: overwrite.type,
        allow: overwrite.allow.toString(),
        deny: overwrite.deny.toString(),
      })
      .execute();
  }
  return id;
}
