import { ALL_PERMISSIONS, isInEffect, PermissionFlags, TIMED_OUT_PERMISSIONS } from '@hearth/protocol';

/**
 * The one computation of a member's permissions (GUILDS.md §1.2), pure: the caller loads the guild's
 * owner, the @everyone role, the member's roles and timeout, and a channel's overwrites.
 */
export interface MemberPermissionInput {
  guildId: string;
  ownerId: string;
  userId: string;
  /** The @everyone role's permissions (its id is the guild's id). */
  everyone: bigint;
  /** The member's other roles. */
  roles: ReadonlyArray<{ id: string; permissions: bigint }>;
  /** When the member's timeout ends (ms), or null. */
  communicationDisabledUntil: number | null;
}

export interface Overwrite {
  /** A role id (type 0) or a user id (type 1); the guild's id is the @everyone overwrite. */
  id: string;
  type: number;
  allow: bigint;
  deny: bigint;
}

const {
  Administrator,
  ViewChannel,
  SendMessages,
  MentionEveryone,
  SendTTSMessages,
  AttachFiles,
  EmbedLinks,
} = PermissionFlags;

/** Bits that mean nothing without SEND_MESSAGES in a channel (GUILDS.md §1.2 step 10). */
const NEEDS_SEND_MESSAGES = MentionEveryone | SendTTSMessages | AttachFiles | EmbedLinks;

/** Guild-level permissions: owner, @everyone, roles, ADMINISTRATOR, then a timeout (steps 1–4, 12). */
export function basePermissions(member: MemberPermissionInput, now: number): bigint {
  if (member.userId === member.ownerId) return ALL_PERMISSIONS;
  let permissions = member.everyone;
  for (const role of member.roles) permissions |= role.permissions;
  if ((permissions & Administrator) === Administrator) return ALL_PERMISSIONS;
  return timedOut(member, now) ? permissions & TIMED_OUT_PERMISSIONS : permissions;
}

/**
 * Channel-level permissions: the base, then the @everyone overwrite, the member's role overwrites
 * aggregated (an allow on any role beats a deny on another), the member overwrite, then the implicit
 * rules (steps 5–12).
 */
export function channelPermissions(
  member: MemberPermissionInput,
  overwrites: readonly Overwrite[],
  now: number,
): bigint {
  const base = basePermissions(member, now);
  if ((base & Administrator) === Administrator) return ALL_PERMISSIONS;
  let permissions = base;
  const everyone = overwrites.find((overwrite) => overwrite.id === member.guildId);
  if (everyone) permissions = (permissions & ~everyone.deny) | everyone.allow;
  const roleIds = new Set(member.roles.map((role) => role.id));
  let allow = 0n;
  let deny = 0n;
  for (const overwrite of overwrites) {
    if (overwrite.type !== 0 || overwrite.id === member.guildId || !roleIds.has(overwrite.id)) continue;
    allow |= overwrite.allow;
    deny |= overwrite.deny;
  }
  permissions = (permissions & ~deny) | allow;
  const own = overwrites.find((overwrite) => overwrite.type === 1 && overwrite.id === member.userId);
  if (own) permissions = (permissions & ~own.deny) | own.allow;
  if (timedOut(member, now)) permissions &= TIMED_OUT_PERMISSIONS;
  if ((permissions & ViewChannel) === 0n) return 0n;
  if ((permissions & SendMessages) === 0n) permissions &= ~NEEDS_SEND_MESSAGES;
  return permissions;
}

/** Owner and ADMINISTRATOR holders are exempt from timeouts (GUILDS.md §1.2 step 12). */
function timedOut(member: MemberPermissionInput, now: number): boolean {
  if (member.communicationDisabledUntil === null || member.communicationDisabledUntil <= now) return false;
  let permissions = member.everyone;
  for (const role of member.roles) permissions |= role.permissions;
  return (permissions & Administrator) === 0n;
}

/**
 * A member's permissions in a thread (GUILDS.md §1.2 rule 13): those of the parent channel, except that
 * SEND_MESSAGES there is not inherited and sending in the thread is SEND_MESSAGES_IN_THREADS.
 */
export function threadPermissions(parent: bigint): bigint {
  const { SendMessages, SendMessagesInThreads } = PermissionFlags;
  const withoutSend = parent & ~SendMessages;
  return has(parent, SendMessagesInThreads) ? withoutSend | SendMessages : withoutSend;
}

export function has(permissions: bigint, bits: bigint): boolean {
  return (permissions & bits) === bits;
}

/**
 * The dated permission rules of 23 February 2026 (seed, Versioning; GUILDS.md §1.1): before that day the
 * older permissions still grant each action.
 */
export const DatedRules = {
  /** Pin or unpin: PIN_MESSAGES, or MANAGE_MESSAGES before the date. */
  canPin(permissions: bigint, now: number): boolean {
    if (has(permissions, PermissionFlags.PinMessages)) return true;
    return !isInEffect('permissionsOf2026_02_23', now) && has(permissions, PermissionFlags.ManageMessages);
  },
  /** Not subject to slowmode: BYPASS_SLOWMODE, or before the date MANAGE_MESSAGES/CHANNELS/THREADS. Bots never are. */
  bypassesSlowmode(permissions: bigint, now: number, isBot: boolean): boolean {
    if (isBot || has(permissions, PermissionFlags.BypassSlowmode)) return true;
    if (isInEffect('permissionsOf2026_02_23', now)) return false;
    const { ManageMessages, ManageChannels, ManageThreads } = PermissionFlags;
    return (permissions & (ManageMessages | ManageChannels | ManageThreads)) !== 0n;
  },
  /** Create emoji or stickers: bots need CREATE_GUILD_EXPRESSIONS from the date (MANAGE_GUILD_EXPRESSIONS before). */
  canCreateExpressions(permissions: bigint, now: number, isBot: boolean): boolean {
    if (has(permissions, PermissionFlags.CreateGuildExpressions)) return true;
    if (isBot && isInEffect('permissionsOf2026_02_23', now)) return false;
    return has(permissions, PermissionFlags.ManageGuildExpressions);
  },
  /** Create scheduled events: bots need CREATE_EVENTS from the date (MANAGE_EVENTS before). */
  canCreateEvents(permissions: bigint, now: number, isBot: boolean): boolean {
    if (has(permissions, PermissionFlags.CreateEvents)) return true;
    if (isBot && isInEffect('permissionsOf2026_02_23', now)) return false;
    return has(permissions, PermissionFlags.ManageEvents);
  },
} as const;
