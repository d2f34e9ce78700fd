import { type Static, Type } from 'typebox';

const Snowflake = Type.String({ format: 'snowflake' });

/** Link or unlink: a channel id links it; absent or null (or an empty body) unlinks (§A.3 row 10). */
export const ChannelLinking = Type.Object({
  channel_id: Type.Optional(Type.Union([Snowflake, Type.Null()])),
});
export type ChannelLinking = Static<typeof ChannelLinking>;

export const LinkingLobbyParams = Type.Object({ lobby_id: Snowflake });
export const LinkingGuildParams = Type.Object({ guild_id: Snowflake });
export const LinkingMemberParams = Type.Object({ lobby_id: Snowflake, user_id: Snowflake });
