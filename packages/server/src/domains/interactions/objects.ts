import {
  ChannelTypes,
  InteractionContextTypes,
  InteractionIntegrationTypes,
  PermissionFlags,
} from '@hearth/protocol';
import { HearthError } from '../../kernel/errors.js';
import type { Executor } from '../../storage/database.js';
import { toUserObject, type User } from '../accounts/service.js';
import { DM_PERMISSIONS, type Place } from '../channel-messages/places.js';
import type { GuildAccess } from '../guilds/access.js';
import * as memberStore from '../guilds/members-store.js';
import { toMemberObject } from '../guilds/objects.js';
import * as guildStore from '../guilds/store.js';
import type { CommandsPort } from './commands.js';

type Json = Record<string, unknown>;

/** Where an interaction happens, as the invoking user and the app stand there. */
export interface InteractionScene {
  place: Place;
  guildId: string | null;
  /** InteractionContextTypes. */
  context: number;
  /** The invoking user's permissions in the channel (guilds), else DM_PERMISSIONS. */
  userPermissions: bigint;
  /** The app's permissions in the channel (`app_permissions`). */
  appPermissions: bigint;
  /** Whether the app's bot is a member of the guild (resolved channels carry `app_permissions` only then). */
  botInGuild: boolean;
  /** `authorizing_integration_owners`, values as strings (seed: Records "Interaction"). */
  owners: Record<string, string>;
  guildLocale: string | undefined;
  guildFeatures: string[];
  /** The channel's partial object: always `id` and `type` (seed). */
  channel: Json;
}

/** What the scene needs besides the database: permissions and who installed the app. */
export interface SceneDeps {
  access: GuildAccess;
  /** Whether the user installed the app to their account (holds its authorization). */
  userInstalled(db: Executor, applicationId: string, userId: string): Promise<boolean>;
  commands: Pick<CommandsPort, 'commandsInstalled'>;
}

/**
 * `app_permissions` in DMs (DOCS receiving-and-responding): ATTACH_FILES | EMBED_LINKS | MENTION_EVERYONE
 * for DMs with other users, and USE_EXTERNAL_EMOJIS besides in the DM with the app's bot.
 */
const PRIVATE_APP_PERMISSIONS =
  PermissionFlags.AttachFiles | PermissionFlags.EmbedLinks | PermissionFlags.MentionEveryone;

/**
 * The scene of an interaction in `place` (already checked for the user): its context, the app's standing
 * and who authorized it. An app neither in the guild nor installed by the user cannot be used there (50001).
 */
export async function sceneOf(
  db: Executor,
  deps: SceneDeps,
  place: Place,
  application: { id: string; botUserId: string },
  userId: string,
): Promise<InteractionScene> {
  const userInstalled = await deps.userInstalled(db, application.id, userId);
  const owners: Record<string, string> = {};
  if (place.guildId !== null) {
    const guild = await guildStore.findGuild(db, place.guildId);
    if (!guild) throw new HearthError('UnknownGuild');
    const botMember = await memberStore.findMember(db, place.guildId, application.botUserId);
    let appPermissions = 0n;
    if (botMember) {
      const access = await deps.access.member(db, place.guildId, application.botUserId);
      appPermissions = await deps.access.permissionsIn(db, access, place.channelId);
      owners[String(InteractionIntegrationTypes.GuildInstall)] = place.guildId;
    } else {
      // Installed with `applications.commands` alone: a guild install without a bot.
      if (await deps.commands.commandsInstalled(db, application.id, place.guildId))
        owners[String(InteractionIntegrationTypes.GuildInstall)] = place.guildId;
      // A user-installed app acts with what the invoking user may do there, never more (DOCS user-installable apps).
      appPermissions = place.permissions & (PermissionFlags.ViewChannel | PRIVATE_APP_PERMISSIONS);
    }
    if (userInstalled) owners[String(InteractionIntegrationTypes.UserInstall)] = userId;
    if (Object.keys(owners).length === 0) throw new HearthError('MissingAccess');
    const row = guild as { preferred_locale?: string; features?: string };
    return {
      place,
      guildId: place.guildId,
      context: InteractionContextTypes.Guild,
      userPermissions: place.permissions,
      appPermissions,
      botInGuild: botMember !== undefined,
      owners,
      guildLocale: row.preferred_locale ?? 'en-US',
      guildFeatures: row.features ? (JSON.parse(row.features) as string[]) : [],
      channel: { id: place.channelId, type: place.type, guild_id: place.guildId },
    };
  }
  const withBot = place.recipients?.includes(application.botUserId) ?? false;
  if (withBot) owners[String(InteractionIntegrationTypes.GuildInstall)] = '0';
  if (userInstalled) owners[String(InteractionIntegrationTypes.UserInstall)] = userId;
  if (Object.keys(owners).length === 0) throw new HearthError('MissingAccess');
  return {
    place,
    guildId: null,
    context: withBot ? InteractionContextTypes.BotDm : InteractionContextTypes.PrivateChannel,
    userPermissions: DM_PERMISSIONS,
    appPermissions: withBot
      ? PRIVATE_APP_PERMISSIONS | PermissionFlags.UseExternalEmojis
      : PRIVATE_APP_PERMISSIONS,
    botInGuild: false,
    owners,
    guildLocale: undefined,
    guildFeatures: [],
    channel: { id: place.channelId, type: place.type ?? ChannelTypes.DM },
  };
}

/** The invoking user as the interaction carries them: `member` (with `permissions`) in guilds, else `user`. */
export async function invokerOf(db: Executor, scene: InteractionScene, user: User): Promise<Json> {
  const userObject = toUserObject(user);
  if (scene.guildId === null) return { user: userObject };
  const member = await memberStore.findMember(db, scene.guildId, user.id);
  if (!member) throw new HearthError('MissingAccess');
  const roles = (await memberStore.roleIdsOf(db, scene.guildId, [user.id])).get(user.id) ?? [];
  return {
    member: { ...toMemberObject(member, roles, userObject), permissions: scene.userPermissions.toString() },
  };
}

/** The interaction object (DOCS receiving-and-responding, Interaction Structure), token included. */
export function toInteractionObject(input: {
  id: string;
  applicationId: string;
  type: number;
  data: Json | undefined;
  scene: InteractionScene;
  invoker: Json;
  token: string;
  message: Json | undefined;
  locale: string;
  attachmentSizeLimit: number;
}): Json {
  const { scene } = input;
  return {
    id: input.id,
    application_id: input.applicationId,
    type: input.type,
    ...(input.data === undefined ? {} : { data: input.data }),
    ...(scene.guildId === null
      ? {}
      : {
          guild: { id: scene.guildId, locale: scene.guildLocale, features: scene.guildFeatures },
          guild_id: scene.guildId,
        }),
    channel: scene.channel,
    channel_id: scene.place.channelId,
    ...input.invoker,
    token: input.token,
    version: 1,
    ...(input.message === undefined ? {} : { message: input.message }),
    app_permissions: scene.appPermissions.toString(),
    locale: input.locale,
    ...(scene.guildLocale === undefined ? {} : { guild_locale: scene.guildLocale }),
    entitlements: [],
    authorizing_integration_owners: scene.owners,
    context: scene.context,
    attachment_size_limit: input.attachmentSizeLimit,
  };
}
