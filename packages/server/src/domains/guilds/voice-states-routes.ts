import type { FastifyPluginAsync } from 'fastify';
import type { Static } from 'typebox';
import { optionalBody, parse } from '../../kernel/validation.js';
import { callerOf } from './members-routes.js';
import {
  GuildParams,
  GuildUserParams,
  ModifyCurrentVoiceState,
  ModifyUserVoiceState,
} from './members-schemas.js';
import type { VoiceStatesService } from './voice-states.js';

const MEMBER = { auth: { bot: true, user: true } } as const;

type Guild = { Params: Static<typeof GuildParams> };
type GuildUser = { Params: Static<typeof GuildUserParams> };

/** Voice state routes (GUILDS.md §3.5). */
export function voiceStatesRoutes(voiceStates: VoiceStatesService): FastifyPluginAsync {
  return async (app) => {
    app.get<Guild>(
      '/guilds/:guild_id/voice-states/@me',
      { config: MEMBER, schema: { params: GuildParams } },
      async (request) => {
        const caller = callerOf(request);
        return voiceStates.getVoiceState(caller, request.params.guild_id, caller.userId);
      },
    );
    app.get<GuildUser>(
      '/guilds/:guild_id/voice-states/:user_id',
      { config: MEMBER, schema: { params: GuildUserParams } },
      async (request) =>
        voiceStates.getVoiceState(callerOf(request), request.params.guild_id, request.params.user_id),
    );
    app.patch<Guild>(
      '/guilds/:guild_id/voice-states/@me',
      { config: MEMBER, schema: { params: GuildParams, body: optionalBody(ModifyCurrentVoiceState) } },
      async (request, reply) => {
        const input = parse(ModifyCurrentVoiceState, request.body ?? {});
        await voiceStates.modifyCurrentVoiceState(callerOf(request), request.params.guild_id, input);
        return reply.code(204).send();
      },
    );
    app.patch<GuildUser>(
      '/guilds/:guild_id/voice-states/:user_id',
      { config: MEMBER, schema: { params: GuildUserParams, body: optionalBody(ModifyUserVoiceState) } },
      async (request, reply) => {
        const { guild_id, user_id } = request.params;
        const input = parse(ModifyUserVoiceState, request.body ?? {});
        await voiceStates.modifyUserVoiceState(callerOf(request), guild_id, user_id, input);
        return reply.code(204).send();
      },
    );
  };
}
