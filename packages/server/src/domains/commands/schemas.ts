import { Type } from 'typebox';

/** Path and query shapes of the command routes (OAS `/applications/{application_id}/…commands…`). */

const snowflake = () => Type.String({ format: 'snowflake' });

export const ApplicationParams = Type.Object({ application_id: snowflake() });
export const CommandParams = Type.Object({ application_id: snowflake(), command_id: snowflake() });
export const GuildParams = Type.Object({ application_id: snowflake(), guild_id: snowflake() });
export const GuildCommandParams = Type.Object({
  application_id: snowflake(),
  guild_id: snowflake(),
  command_id: snowflake(),
});
export const IndexGuildParams = Type.Object({ guild_id: snowflake() });

/** `with_localizations`: the platform's boolean query strings (true/false, 1/0). */
export const ListQuery = Type.Object({ with_localizations: Type.Optional(Type.Boolean()) });
