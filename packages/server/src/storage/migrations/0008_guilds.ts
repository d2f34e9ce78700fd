import { DEFAULT_EVERYONE_PERMISSIONS } from '@hearth/protocol';
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * The guild platform's core (GUILDS.md §1–§3, §8): guild settings and tag, roles, member roles and member
 * fields, channels with permission overwrites, bans, the audit log and voice states.
 */
export const guilds: Migration = {
  async up(db: Kysely<unknown>) {
    // Guild settings (GUILDS.md §3.1); each column its own ALTER, as SQLite requires.
    const guildColumns: Array<[string, 'text' | 'integer' | 'bigint', string | number | null]> = [
      ['splash', 'text', null],
      ['discovery_splash', 'text', null],
      ['description', 'text', null],
      ['verification_level', 'integer', 0],
      ['default_message_notifications', 'integer', 0],
      ['explicit_content_filter', 'integer', 0],
      ['mfa_level', 'integer', 0],
      ['nsfw_level', 'integer', 0],
      ['afk_channel_id', 'text', null],
      ['afk_timeout', 'integer', 300],
      ['system_channel_id', 'text', null],
      ['system_channel_flags', 'integer', 0],
      ['rules_channel_id', 'text', null],
      ['public_updates_channel_id', 'text', null],
      ['safety_alerts_channel_id', 'text', null],
      ['preferred_locale', 'text', 'en-US'],
      ['premium_progress_bar_enabled', 'integer', 0],
      ['application_id', 'text', null],
      // Guild tag (GUILDS.md §3.4): 1–4 characters and a badge hash.
      ['tag', 'text', null],
      ['badge', 'text', null],
    ];
    for (const [name, type, value] of guildColumns) {
      await db.schema
        .alterTable('guilds')
        .addColumn(name, type, (c) => (value === null ? c : c.notNull().defaultTo(value)))
        .execute();
    }

    // Member fields (GUILDS.md §3.2). `permissions` of 0002 stays unused: roles now hold permissions.
    const memberColumns: Array<[string, 'text' | 'integer' | 'bigint', string | number | null]> = [
      ['nick', 'text', null],
      ['avatar', 'text', null],
      ['banner', 'text', null],
      ['bio', 'text', null],
      ['flags', 'integer', 0],
      ['pending', 'integer', 0],
      ['mute', 'integer', 0],
      ['deaf', 'integer', 0],
      ['communication_disabled_until', 'bigint', null],
    ];
    for (const [name, type, value] of memberColumns) {
      await db.schema
        .alterTable('guild_members')
        .addColumn(name, type, (c) => (value === null ? c : c.notNull().defaultTo(value)))
        .execute();
    }

    // The guild a user shows as `primary_guild` (GUILDS.md §3.4); `identity_enabled` is nullable on the wire.
    await db.schema.alterTable('users').addColumn('primary_guild_id', 'text').execute();
    await db.schema.alterTable('users').addColumn('primary_guild_enabled', 'integer').execute();

    // Roles (GUILDS.md §1.4). The @everyone role's id is the guild's id.
    await db.schema
      .createTable('guild_roles')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('guild_id', 'text', (c) => c.notNull().references('guilds.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('permissions', 'text', (c) => c.notNull().defaultTo('0'))
      .addColumn('color', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('secondary_color', 'integer')
      .addColumn('tertiary_color', 'integer')
      .addColumn('hoist', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('icon', 'text')
      .addColumn('unicode_emoji', 'text')
      .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('managed', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('mentionable', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('flags', 'integer', (c) => c.notNull().defaultTo(0))
      // Role tags: a bot's managed role names its bot user.
      .addColumn('bot_id', 'text')
      .addColumn('integration_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('guild_roles_guild').on('guild_roles').column('guild_id').execute();

    await db.schema
      .createTable('guild_member_roles')
      .addColumn('guild_id', 'text', (c) => c.notNull().references('guilds.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('role_id', 'text', (c) => c.notNull().references('guild_roles.id').onDelete('cascade'))
      .addPrimaryKeyConstraint('guild_member_roles_pk', ['guild_id', 'user_id', 'role_id'])
      .execute();
    await db.schema
      .createIndex('guild_member_roles_role')
      .on('guild_member_roles')
      .column('role_id')
      .execute();

    // Guild channels (GUILDS.md §2.2); threads add their own columns later.
    await db.schema
      .createTable('channels')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('guild_id', 'text', (c) => c.notNull().references('guilds.id').onDelete('cascade'))
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('parent_id', 'text')
      .addColumn('topic', 'text')
      .addColumn('nsfw', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('rate_limit_per_user', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('bitrate', 'integer')
      .addColumn('user_limit', 'integer')
      .addColumn('rtc_region', 'text')
      .addColumn('video_quality_mode', 'integer')
      .addColumn('default_auto_archive_duration', 'integer')
      .addColumn('default_thread_rate_limit_per_user', 'integer')
      .addColumn('flags', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_message_id', 'text')
      .addColumn('last_pin_timestamp', 'bigint')
      // Forum and media channels: JSON text.
      .addColumn('available_tags', 'text')
      .addColumn('default_reaction_emoji', 'text')
      .addColumn('default_sort_order', 'integer')
      .addColumn('default_forum_layout', 'integer')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('channels_guild').on('channels').column('guild_id').execute();

    await db.schema
      .createTable('channel_overwrites')
      .addColumn('channel_id', 'text', (c) => c.notNull().references('channels.id').onDelete('cascade'))
      .addColumn('target_id', 'text', (c) => c.notNull())
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('allow', 'text', (c) => c.notNull().defaultTo('0'))
      .addColumn('deny', 'text', (c) => c.notNull().defaultTo('0'))
      .addPrimaryKeyConstraint('channel_overwrites_pk', ['channel_id', 'target_id'])
      .execute();

    await db.schema
      .createTable('guild_bans')
      .addColumn('guild_id', 'text', (c) => c.notNull().references('guilds.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('reason', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('guild_bans_pk', ['guild_id', 'user_id'])
      .execute();

    // Audit log (GUILDS.md §8): `changes` and `options` are JSON text.
    await db.schema
      .createTable('audit_log_entries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('guild_id', 'text', (c) => c.notNull().references('guilds.id').onDelete('cascade'))
      .addColumn('user_id', 'text')
      .addColumn('target_id', 'text')
      .addColumn('action_type', 'integer', (c) => c.notNull())
      .addColumn('changes', 'text')
      .addColumn('options', 'text')
      .addColumn('reason', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('audit_log_entries_guild')
      .on('audit_log_entries')
      .columns(['guild_id', 'action_type'])
      .execute();

    // Voice states (GUILDS.md §3.5): one per user per guild.
    await db.schema
      .createTable('voice_states')
      .addColumn('guild_id', 'text', (c) => c.notNull().references('guilds.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('channel_id', 'text', (c) => c.notNull().references('channels.id').onDelete('cascade'))
      .addColumn('session_id', 'text', (c) => c.notNull())
      .addColumn('deaf', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('mute', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('self_deaf', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('self_mute', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('self_stream', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('self_video', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('suppress', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('request_to_speak_timestamp', 'bigint')
      .addPrimaryKeyConstraint('voice_states_pk', ['guild_id', 'user_id'])
      .execute();
    await db.schema.createIndex('voice_states_channel').on('voice_states').column('channel_id').execute();

    // Guilds made before roles existed get their @everyone role.
    await sql`
      INSERT INTO guild_roles (id, guild_id, name, permissions, position, created_at)
      SELECT id, id, '@everyone', ${DEFAULT_EVERYONE_PERMISSIONS.toString()}, 0, created_at FROM guilds
    `.execute(db);
  },
};
