import { AllowedMentionTypes } from '@hearth/protocol';
import type { AllowedMentions } from './schemas.js';

const USER_MENTION = /<@!?(\d{1,20})>/g;
const ROLE_MENTION = /<@&(\d{1,20})>/g;
const EVERYONE_MENTION = /@(everyone|here)\b/;

/** What a message's text names, before anyone's rights are weighed. */
export interface Written {
  users: string[];
  roles: string[];
  everyone: boolean;
}

/** Who the message mentions (and so notifies): its `mentions`, `mention_roles`, `mention_everyone`. */
export interface Mentions {
  users: string[];
  roles: string[];
  everyone: boolean;
}

/** The ids named in `content` in order of first appearance, and whether it says @everyone or @here. */
export function written(content: string): Written {
  const unique = (pattern: RegExp) => [...new Set([...content.matchAll(pattern)].map((match) => match[1]!))];
  return {
    users: unique(USER_MENTION),
    roles: unique(ROLE_MENTION),
    everyone: EVERYONE_MENTION.test(content),
  };
}

/** What the sender and the place allow: which users and roles exist there, and MENTION_EVERYONE. */
export interface MentionScope {
  /** Of the given ids, those that name users who can be mentioned here. */
  users: ReadonlySet<string>;
  /** The guild's roles named, with whether each is `mentionable`; empty outside a guild. */
  roles: ReadonlyMap<string, boolean>;
  /** MENTION_EVERYONE: @everyone/@here and roles that are not mentionable notify (GUILDS.md §4.6). */
  mentionEveryone: boolean;
  /** The author of the message replied to, when this is a reply. */
  repliedAuthorId?: string;
}

/**
 * `allowed_mentions` applied (GUILDS.md §4.6): omitted, every kind is parsed and a reply mentions the
 * replied-to author; given, only the kinds in `parse` and the ids in `users`/`roles`, and the replied-to
 * author only with `replied_user: true`.
 */
export function resolveMentions(
  text: Written,
  allowed: AllowedMentions | null | undefined,
  scope: MentionScope,
): Mentions {
  const parse = new Set(allowed ? (allowed.parse ?? []) : Object.values(AllowedMentionTypes));
  const userList = new Set(allowed?.users ?? []);
  const roleList = new Set(allowed?.roles ?? []);
  const users = text.users.filter(
    (id) => scope.users.has(id) && (parse.has(AllowedMentionTypes.Users) || userList.has(id)),
  );
  const repliedUser = allowed ? allowed.replied_user === true : true;
  if (scope.repliedAuthorId !== undefined && repliedUser && !users.includes(scope.repliedAuthorId))
    users.push(scope.repliedAuthorId);
  const roles = text.roles.filter((id) => {
    const mentionable = scope.roles.get(id);
    if (mentionable === undefined) return false;
    if (!parse.has(AllowedMentionTypes.Roles) && !roleList.has(id)) return false;
    return mentionable || scope.mentionEveryone;
  });
  const everyone = text.everyone && parse.has(AllowedMentionTypes.Everyone) && scope.mentionEveryone;
  return { users, roles, everyone };
}

/** `parse: ["users"]` with a `users` list (or roles with roles) is a validation error; answers the kind. */
export function exclusiveConflict(
  allowed: AllowedMentions | null | undefined,
): 'users' | 'roles' | undefined {
  if (!allowed?.parse) return undefined;
  if (allowed.parse.includes(AllowedMentionTypes.Users) && (allowed.users?.length ?? 0) > 0) return 'users';
  if (allowed.parse.includes(AllowedMentionTypes.Roles) && (allowed.roles?.length ?? 0) > 0) return 'roles';
  return undefined;
}
