import { InviteLimits, InviteTargetTypes } from '@hearth/protocol';
import { type Static, type TSchema, Type } from 'typebox';

/**
 * Request shapes of the invite routes (OAS `CreateGuildInviteRequest`; GUILDS.md §3.6). Multipart and
 * url-encoded bodies arrive as strings; the service turns their numbers and booleans back first.
 */

const Snowflake = Type.String({ format: 'snowflake' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const CreateInvite = Type.Object({
  max_age: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: InviteLimits.maxAgeMax }))),
  max_uses: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: InviteLimits.maxUsesMax }))),
  temporary: Type.Optional(Nullable(Type.Boolean())),
  unique: Type.Optional(Nullable(Type.Boolean())),
  target_type: Type.Optional(
    Nullable(Type.Unsafe<number>({ type: 'integer', enum: Object.values(InviteTargetTypes) })),
  ),
  target_user_id: Type.Optional(Nullable(Snowflake)),
  target_application_id: Type.Optional(Nullable(Snowflake)),
  role_ids: Type.Optional(Nullable(Type.Array(Snowflake, { maxItems: InviteLimits.roleIdsMax }))),
  /** The CSV text of the `target_users_file` part. */
  target_users_file: Type.Optional(Nullable(Type.String())),
});
export type CreateInvite = Static<typeof CreateInvite>;

/** PUT /invites/{code}/target-users: the file part. */
export const UpdateTargetUsers = Type.Object({ target_users_file: Type.String() });

/** An invite code as a path parameter: any code that is not Hearth's is simply unknown (10006). */
export const InviteParams = Type.Object({ code: Type.String({ minLength: 1, maxLength: 512 }) });
export const ChannelParams = Type.Object({ channel_id: Snowflake });
export const GuildParams = Type.Object({ guild_id: Snowflake });

export const GetInviteQuery = Type.Object({
  with_counts: Type.Optional(Type.Boolean()),
  with_expiration: Type.Optional(Type.Boolean()),
  guild_scheduled_event_id: Type.Optional(Snowflake),
});
export type GetInviteQuery = Static<typeof GetInviteQuery>;

/**
 * Multipart and url-encoded bodies carry every field as text: their numbers and booleans are read back.
 * `role_ids` may be one comma-separated string in any body (OAS allows a string).
 */
export function normalizeCreateInvite(input: unknown, form: boolean): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input ?? {};
  const body: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  if (typeof body['role_ids'] === 'string') body['role_ids'] = splitIds(body['role_ids']);
  if (!form) return body;
  for (const key of ['max_age', 'max_uses', 'target_type']) {
    const value = body[key];
    if (typeof value === 'string' && /^-?[0-9]{1,16}$/.test(value)) body[key] = Number(value);
  }
  for (const key of ['temporary', 'unique']) {
    const value = body[key];
    if (value === 'true' || value === 'false') body[key] = value === 'true';
  }
  for (const key of ['target_user_id', 'target_application_id', 'target_type']) {
    if (body[key] === '') body[key] = null;
  }
  return body;
}

function splitIds(text: string): string[] {
  return text
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
}
