import {
  AllowedMentionTypes,
  GROUP_DM_MAX_USERS,
  MessageLimits,
  MessageReferenceTypes,
} from '@hearth/protocol';
import { type Static, type TSchema, Type } from 'typebox';

/**
 * Request shapes of the channel message routes (OAS `MessageCreateRequest`, `MessageEditRequestPartial`;
 * GUILDS.md §4.5, §4.6). Embeds, components and attachments are only shaped here (arrays of objects):
 * their field rules are the content validators' (service step `#checkEmbeds` / `#checkComponents`).
 */

const Snowflake = Type.String({ format: 'snowflake' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Choice = <T extends string | number>(values: readonly T[]) =>
  Type.Unsafe<T>({ type: typeof values[0] === 'string' ? 'string' : 'integer', enum: [...values] });
const Item = Type.Record(Type.String(), Type.Unknown());
const Objects = Type.Array(Item);

const Embeds = Type.Array(Item, { maxItems: MessageLimits.embedsMax });

export const ChannelParams = Type.Object({ channel_id: Snowflake });
export const MessageParams = Type.Object({ channel_id: Snowflake, message_id: Snowflake });
export const RecipientParams = Type.Object({ channel_id: Snowflake, user_id: Snowflake });

/** A nickname a bot gives a recipient of the group DM it manages (a member nickname's length). */
const Nick = Type.String({ maxLength: 32 });
/** An OAuth2 access token a user granted the bot's application (`gdm.join`). */
const AccessToken = Type.String({ maxLength: 2048 });

/**
 * PUT /channels/{id}/recipients/{user_id} (OAS `add_group_dm_user`): a person adds a friend; a bot adds the
 * user whose `access_token` (scope `gdm.join`) it holds, with an optional `nick`.
 */
export const AddRecipient = Type.Object({
  access_token: Type.Optional(Nullable(AccessToken)),
  nick: Type.Optional(Nullable(Nick)),
});
export type AddRecipient = Static<typeof AddRecipient>;

/** PATCH /channels/{id} of a group DM (OAS `UpdateGroupDMRequestPartial`): its name (null or "" clears it) and icon. */
export const ModifyGroupDm = Type.Object({
  name: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  icon: Type.Optional(Nullable(Type.String({ maxLength: 14_000_000 }))),
});

/** `allowed_mentions` (GUILDS.md §4.6): `parse` and an id list of the same kind exclude each other. */
export const AllowedMentions = Type.Object({
  parse: Type.Optional(Nullable(Type.Array(Choice(Object.values(AllowedMentionTypes))))),
  users: Type.Optional(Nullable(Type.Array(Snowflake, { maxItems: 100 }))),
  roles: Type.Optional(Nullable(Type.Array(Snowflake, { maxItems: 100 }))),
  replied_user: Type.Optional(Nullable(Type.Boolean())),
});
export type AllowedMentions = Static<typeof AllowedMentions>;

/** `message_reference` (GUILDS.md §4.4): replies here; forwards are the forwarding step's. */
export const MessageReference = Type.Object({
  type: Type.Optional(Nullable(Choice(Object.values(MessageReferenceTypes)))),
  message_id: Type.Optional(Nullable(Snowflake)),
  channel_id: Type.Optional(Nullable(Snowflake)),
  guild_id: Type.Optional(Nullable(Snowflake)),
  fail_if_not_exists: Type.Optional(Nullable(Type.Boolean())),
});
export type MessageReference = Static<typeof MessageReference>;

/** A nonce is a string of at most 25 characters or an integer (GUILDS.md §4.5). */
const Nonce = Type.Union([
  Type.String({ maxLength: MessageLimits.nonceMax }),
  Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
]);

export const CreateMessage = Type.Object({
  content: Type.Optional(Nullable(Type.String({ maxLength: MessageLimits.contentMax }))),
  nonce: Type.Optional(Nullable(Nonce)),
  enforce_nonce: Type.Optional(Nullable(Type.Boolean())),
  tts: Type.Optional(Nullable(Type.Boolean())),
  embeds: Type.Optional(Nullable(Embeds)),
  allowed_mentions: Type.Optional(Nullable(AllowedMentions)),
  message_reference: Type.Optional(Nullable(MessageReference)),
  components: Type.Optional(Nullable(Objects)),
  sticker_ids: Type.Optional(Nullable(Type.Array(Snowflake, { maxItems: MessageLimits.stickersMax }))),
  attachments: Type.Optional(Nullable(Objects)),
  flags: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
});
export type CreateMessage = Static<typeof CreateMessage>;

export const EditMessage = Type.Object({
  content: Type.Optional(Nullable(Type.String({ maxLength: MessageLimits.contentMax }))),
  embeds: Type.Optional(Nullable(Embeds)),
  flags: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  allowed_mentions: Type.Optional(Nullable(AllowedMentions)),
  components: Type.Optional(Nullable(Objects)),
  attachments: Type.Optional(Nullable(Objects)),
});
export type EditMessage = Static<typeof EditMessage>;

/** GET /channels/{id}/messages: at most one of `around`, `before`, `after` is used (in that order). */
export const ListMessagesQuery = Type.Object({
  around: Type.Optional(Snowflake),
  before: Type.Optional(Snowflake),
  after: Type.Optional(Snowflake),
  limit: Type.Optional(Type.Integer({ minimum: MessageLimits.listMin, maximum: MessageLimits.listMax })),
});
export type ListMessagesQuery = Static<typeof ListMessagesQuery>;

/**
 * POST /users/@me/channels (GUILDS.md §2.1 DM): `recipient_id` opens a DM; `recipients` (a person's
 * friends, the official client's form) a group DM, whose users are at most GROUP_DM_MAX_USERS with its owner;
 * `access_tokens` (a bot's, scope `gdm.join`) a group DM of those users that the bot manages, `nicks`
 * naming them there (user id → nickname).
 */
export const CreateDM = Type.Object({
  recipient_id: Type.Optional(Snowflake),
  recipients: Type.Optional(Type.Array(Snowflake, { maxItems: GROUP_DM_MAX_USERS - 1 })),
  access_tokens: Type.Optional(Type.Array(AccessToken, { maxItems: GROUP_DM_MAX_USERS })),
  nicks: Type.Optional(
    Nullable(Type.Record(Type.String(), Nullable(Nick), { maxProperties: GROUP_DM_MAX_USERS })),
  ),
});
