import { Type } from 'typebox';

const Snowflake = Type.String({ format: 'snowflake' });

export const UserIdParams = Type.Object({ user_id: Snowflake });

/** POST /users/@me/relationships: a friend request by username (PROTOCOL.md §B.6). */
export const FriendRequestByName = Type.Object({
  username: Type.String({ minLength: 2, maxLength: 32 }),
  discriminator: Type.Optional(Type.Union([Type.String({ maxLength: 4 }), Type.Null()])),
  note: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
});

/** POST /users/@me/game-relationships (PROTOCOL.md §B.6). */
export const GameFriendRequestByName = Type.Object({
  username: Type.String({ minLength: 2, maxLength: 32 }),
});

/**
 * PUT /users/@me/relationships/{user.id}: `type` absent or -1 sends or accepts a friend request; 1 does the
 * same; 2 blocks (PROTOCOL.md §B.6).
 */
export const PutRelationship = Type.Union([
  Type.Object({ type: Type.Optional(Type.Union([Type.Null(), Type.Integer()])) }),
  Type.Null(),
]);
