import { DirectMessageLimits, MessageActivityTypes } from '@hearth/protocol';
import { Type } from 'typebox';

const Snowflake = Type.String({ format: 'snowflake' });

export const UserIdParams = Type.Object({ user_id: Snowflake });
export const MessageParams = Type.Object({ user_id: Snowflake, message_id: Snowflake });
export const ModerationParams = Type.Object({
  user_id_1: Snowflake,
  user_id_2: Snowflake,
  message_id: Snowflake,
});

const Metadata = Type.Record(
  Type.String({ maxLength: DirectMessageLimits.metadataKeyMax }),
  Type.String({ maxLength: DirectMessageLimits.metadataValueMax }),
  { maxProperties: DirectMessageLimits.metadataMaxKeys },
);

/** POST /users/{user.id}/messages (PROTOCOL.md §B.5, UDOC): Create Message fields and `metadata`. */
export const NewDirectMessage = Type.Object({
  content: Type.Optional(Type.String({ maxLength: DirectMessageLimits.contentMax })),
  metadata: Type.Optional(Type.Union([Metadata, Type.Null()])),
  nonce: Type.Optional(
    Type.Union([Type.Integer(), Type.String({ maxLength: DirectMessageLimits.nonceMax })]),
  ),
  tts: Type.Optional(Type.Boolean()),
  flags: Type.Optional(Type.Integer({ minimum: 0 })),
  /** An activity invite or join request (PROTOCOL.md §B.9). */
  activity: Type.Optional(
    Type.Object({
      type: Type.Union([
        Type.Literal(MessageActivityTypes.Join),
        Type.Literal(MessageActivityTypes.Spectate),
        Type.Literal(MessageActivityTypes.Listen),
        Type.Literal(MessageActivityTypes.JoinRequest),
        Type.Literal(MessageActivityTypes.StreamRequest),
      ]),
      party_id: Type.Optional(Type.String({ maxLength: 128 })),
    }),
  ),
  application_id: Type.Optional(Snowflake),
});

/** PATCH /users/{user.id}/messages/{message.id}: editing content clears moderation metadata (§B.4). */
export const EditDirectMessage = Type.Object({
  content: Type.Optional(Type.String({ minLength: 1, maxLength: DirectMessageLimits.contentMax })),
  metadata: Type.Optional(Type.Union([Metadata, Type.Null()])),
});

export const HistoryQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: DirectMessageLimits.getMin, maximum: DirectMessageLimits.getMax }),
  ),
});
