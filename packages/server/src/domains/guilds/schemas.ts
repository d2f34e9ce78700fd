import { Type } from 'typebox';

const Snowflake = Type.String({ format: 'snowflake' });

/** GET /users/@me/guilds query (PROTOCOL.md; SPEC `MyGuildResponse` pages). */
export const ListMyGuildsQuery = Type.Object({
  before: Type.Optional(Snowflake),
  after: Type.Optional(Snowflake),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 200 })),
  with_counts: Type.Optional(Type.Boolean()),
});

export const MyGuildObject = Type.Object({
  id: Type.String(),
  name: Type.String(),
  icon: Type.Union([Type.String(), Type.Null()]),
  banner: Type.Union([Type.String(), Type.Null()]),
  owner: Type.Boolean(),
  permissions: Type.String(),
  features: Type.Array(Type.String()),
  approximate_member_count: Type.Optional(Type.Integer()),
});

export const NewGuild = Type.Object({
  name: Type.String({ minLength: 2, maxLength: 100 }),
  banner: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
});
