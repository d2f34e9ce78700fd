import type { FastifyPluginAsync } from 'fastify';
import type { Static } from 'typebox';
import { optionalBody } from '../../kernel/validation.js';
import { reasonOf, userOf } from '../channels/routes.js';
import { ChannelParams, SetVoiceChannelStatus } from './schemas.js';
import type { VoiceStatusService } from './service.js';

/** Guild channel routes take bot tokens and user sessions (GUILDS.md §2.4). */
const MEMBER = { auth: { bot: true, user: true } } as const;

type Channel = { Params: Static<typeof ChannelParams> };

/** Set Voice Channel Status (PROTOCOL.md §D.7): 204 on success. */
export function voiceStatusRoutes(voiceStatus: VoiceStatusService): FastifyPluginAsync {
  return async (app) => {
    app.put<Channel>(
      '/channels/:channel_id/voice-status',
      { config: MEMBER, schema: { params: ChannelParams, body: optionalBody(SetVoiceChannelStatus) } },
      async (request, reply) => {
        await voiceStatus.setVoiceChannelStatus(
          userOf(request),
          request.params.channel_id,
          request.body,
          reasonOf(request),
        );
        return reply.code(204).send();
      },
    );
  };
}
