import { FormErrors, ApplicationCommandOptionTypes as O } from '@hearth/protocol';
import { invalidForm } from '../../kernel/errors.js';
import type { Executor } from '../../storage/database.js';
import { toUserObject, type User } from '../accounts/service.js';
import * as channelStore from '../channels/store.js';
import type { GuildAccess } from '../guilds/access.js';
import * as memberStore from '../guilds/members-store.js';
import { toMemberObject, toRoleObject } from '../guilds/objects.js';
import * as roleStore from '../guilds/roles-store.js';

type Json = Record<string, unknown>;

/** What resolving needs: users, and the app's permissions in a channel (only when its bot is a member). */
export interface ResolveDeps {
  access: GuildAccess;
  getUserIn(db: Executor, id: string): Promise<User | undefined>;
}

/**
 * `data.resolved` of a chat input command (DOCS receiving-and-responding, Resolved Data Structure): the
 * users (with their members in guilds), roles, channels and attachments its options name; an attachment
 * option's value becomes its attachment's id, and `used` collects the `files[n]` it named. A resolved channel carries
 * `app_permissions` only when the app's bot is in the guild (seed: Records "Interaction").
 */
export async function resolveOptions(
  db: Executor,
  deps: ResolveDeps,
  options: readonly Json[],
  scene: { guildId: string | null; botUserId: string; botInGuild: boolean },
  files: ReadonlyMap<number, Json> = new Map(),
  used: Set<number> = new Set(),
): Promise<Json> {
  const attachments: Json = {};
  // An ATTACHMENT option names `files[n]` of the user's request; the app sees the stored attachment's id.
  const attachment = (option: Json, value: string) => {
    const file = /^\d{1,9}$/.test(value) ? files.get(Number(value)) : undefined;
    if (!file) return false;
    used.add(Number(value));
    attachments[file['id'] as string] = file;
    option['value'] = file['id'];
    return true;
  };
  const users: Json = {};
  const members: Json = {};
  const roles: Json = {};
  const channels: Json = {};
  const user = async (id: string) => {
    const found = await deps.getUserIn(db, id);
    if (!found) return false;
    users[id] = toUserObject(found);
    if (scene.guildId !== null) {
      const member = await memberStore.findMember(db, scene.guildId, id);
      if (member) {
        const roleIds = (await memberStore.roleIdsOf(db, scene.guildId, [id])).get(id) ?? [];
        const { user: _user, ...partial } = toMemberObject(member, roleIds, undefined) as Json;
        members[id] = partial;
      }
    }
    return true;
  };
  const role = async (id: string) => {
    if (scene.guildId === null) return false;
    const row = await roleStore.findRole(db, scene.guildId, id);
    if (!row) return false;
    roles[id] = toRoleObject(row);
    return true;
  };
  const channel = async (id: string) => {
    const row = await channelStore.findChannel(db, id);
    if (!row || row.guild_id !== scene.guildId) return false;
    let permissions: string | undefined;
    if (scene.botInGuild && scene.guildId !== null) {
      const access = await deps.access.member(db, scene.guildId, scene.botUserId);
      permissions = (await deps.access.permissionsIn(db, access, id)).toString();
    }
    channels[id] = {
      id,
      name: row.name,
      type: Number(row.type),
      parent_id: row.parent_id,
      ...(permissions === undefined ? {} : { app_permissions: permissions }),
    };
    return true;
  };
  const visit = async (list: readonly Json[], path: string): Promise<void> => {
    for (const [index, option] of list.entries()) {
      const at = `${path}.${index}`;
      const type = option['type'];
      const value = option['value'];
      if (Array.isArray(option['options'])) await visit(option['options'] as Json[], `${at}.options`);
      if (typeof value !== 'string') continue;
      let known = true;
      if (type === O.User) known = await user(value);
      else if (type === O.Role) known = await role(value);
      else if (type === O.Channel) known = await channel(value);
      else if (type === O.Mentionable) known = (await user(value)) || (await role(value));
      else if (type === O.Attachment) known = attachment(option, value);
      if (!known) throw invalidForm(`${at}.value`, FormErrors.invalid());
    }
  };
  await visit(options, 'data.options');
  const resolved: Json = {};
  if (Object.keys(users).length > 0) resolved['users'] = users;
  if (Object.keys(members).length > 0) resolved['members'] = members;
  if (Object.keys(roles).length > 0) resolved['roles'] = roles;
  if (Object.keys(channels).length > 0) resolved['channels'] = channels;
  if (Object.keys(attachments).length > 0) resolved['attachments'] = attachments;
  return resolved;
}
