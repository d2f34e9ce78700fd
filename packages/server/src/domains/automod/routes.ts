import type { FastifyPluginAsync } from 'fastify';
import type { Static } from 'typebox';
import { optionalBody } from '../../kernel/validation.js';
import { reasonOf, userOf } from '../channels/routes.js';
import { CreateRule, GuildParams, ModifyRule, RuleParams } from './schemas.js';
import type { AutoModService } from './service.js';

/** AutoMod routes take bot tokens and user sessions, as the other guild routes (GUILDS.md §10). */
const MEMBER = { auth: { bot: true, user: true } } as const;

type Guild = { Params: Static<typeof GuildParams> };
type Rule = { Params: Static<typeof RuleParams> };

export function automodRoutes(automod: AutoModService): FastifyPluginAsync {
  return async (app) => {
    app.get<Guild>(
      '/guilds/:guild_id/auto-moderation/rules',
      { config: MEMBER, schema: { params: GuildParams } },
      async (request) => automod.listRules(userOf(request), request.params.guild_id),
    );
    // The platform answers a created rule with 200 (OAS create_auto_moderation_rule).
    app.post<Guild>(
      '/guilds/:guild_id/auto-moderation/rules',
      { config: MEMBER, schema: { params: GuildParams, body: optionalBody(CreateRule) } },
      async (request) =>
        automod.createRule(userOf(request), request.params.guild_id, request.body, reasonOf(request)),
    );
    app.get<Rule>(
      '/guilds/:guild_id/auto-moderation/rules/:rule_id',
      { config: MEMBER, schema: { params: RuleParams } },
      async (request) => automod.getRule(userOf(request), request.params.guild_id, request.params.rule_id),
    );
    app.patch<Rule>(
      '/guilds/:guild_id/auto-moderation/rules/:rule_id',
      { config: MEMBER, schema: { params: RuleParams, body: optionalBody(ModifyRule) } },
      async (request) =>
        automod.modifyRule(
          userOf(request),
          request.params.guild_id,
          request.params.rule_id,
          request.body,
          reasonOf(request),
        ),
    );
    app.delete<Rule>(
      '/guilds/:guild_id/auto-moderation/rules/:rule_id',
      { config: MEMBER, schema: { params: RuleParams } },
      async (request, reply) => {
        await automod.deleteRule(
          userOf(request),
          request.params.guild_id,
          request.params.rule_id,
          reasonOf(request),
        );
        return reply.code(204).send();
      },
    );
  };
}
