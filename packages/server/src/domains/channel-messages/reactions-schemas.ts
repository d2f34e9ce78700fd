import { MessageLimits, ReactionTypes } from '@hearth/protocol';
import { type Static, Type } from 'typebox';

/** Path and query shapes of the reaction routes (OAS `/channels/{channel_id}/messages/{message_id}/reactions*`). */

const Snowflake = Type.String({ format: 'snowflake' });

export const ReactionsParams = Type.Object({ channel_id: Snowflake, message_id: Snowflake });
/** `{emoji_name}` is checked by the service (10014, not 50035, for one it does not know). */
export const EmojiParams = Type.Object({
  channel_id: Snowflake,
  message_id: Snowflake,
  emoji_name: Type.String(),
});
export const UserReactionParams = Type.Object({
  channel_id: Snowflake,
  message_id: Snowflake,
  emoji_name: Type.String(),
  user_id: Snowflake,
});

/** GET …/reactions/{emoji}: `type` 0 normal or 1 burst, users after `after`, `limit` 1–100 (25). */
export const ListReactionsQuery = Type.Object({
  type: Type.Optional(Type.Unsafe<number>({ type: 'integer', enum: Object.values(ReactionTypes) })),
  after: Type.Optional(Snowflake),
  limit: Type.Optional(
    Type.Integer({ minimum: MessageLimits.reactionUsersMin, maximum: MessageLimits.reactionUsersMax }),
  ),
});
export type ListReactionsQuery = Static<typeof ListReactionsQuery>;
