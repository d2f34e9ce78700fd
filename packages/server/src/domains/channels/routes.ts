import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { HearthError } from '../../kernel/errors.js';
import { optionalBody } from '../../kernel/validation.js';
import { auditLogReason } from '../guilds/audit-log.js';
import {
  ChannelParams,
  CreateChannel,
  EditOverwrite,
  GuildParams,
  OverwriteParams,
  ReorderChannels,
} from './schemas.js';
import type { ChannelsService } from './service.js';

/** Guild channel routes take bot tokens and user sessions (GUILDS.md §2.4). */
const MEMBER = { auth: { bot: true, user: true } } as const;

type Guild = { Params: Static<typeof GuildParams> };
type Channel = { Params: Static<typeof ChannelParams> };
type Overwrite = { Params: Static<typeof OverwriteParams> };

export function channelsRoutes(channels: ChannelsService): FastifyPluginAsync {
  return async (app) => {
    app.get<Guild>(
      '/guilds/:guild_id/channels',
      { config: MEMBER, schema: { params: GuildParams } },
      async (request) => channels.visibleTo(userOf(request), request.params.guild_id),
    );
    app.post<Guild>(
      '/guilds/:guild_id/channels',
      { config: MEMBER, schema: { params: GuildParams, body: optionalBody(CreateChannel) } },
      async (request, reply) => {
        const channel = await channels.createChannel(
          userOf(request),
          request.params.guild_id,
          request.body,
          reasonOf(request),
        );
        return reply.code(201).send(channel);
      },
    );
    app.patch<Guild>(
      '/guilds/:guild_id/channels',
      { config: MEMBER, schema: { params: GuildParams, body: ReorderChannels } },
      async (request, reply) => {
        await channels.reorderChannels(
          userOf(request),
          request.params.guild_id,
          request.body,
          reasonOf(request),
        );
        return reply.code(204).send();
      },
    );

    app.get<Channel>(
      '/channels/:channel_id',
      { config: MEMBER, schema: { params: ChannelParams } },
      async (request) => channels.getChannel(userOf(request), request.params.channel_id),
    );
    app.patch<Channel>(
      '/channels/:channel_id',
      { config: MEMBER, schema: { params: ChannelParams } },
      async (request) =>
        channels.modifyChannel(userOf(request), request.params.channel_id, request.body, reasonOf(request)),
    );
    app.delete<Channel>(
      '/channels/:channel_id',
      { config: MEMBER, schema: { params: ChannelParams } },
      async (request) =>
        channels.deleteChannel(userOf(request), request.params.channel_id, reasonOf(request)),
    );

    app.put<Overwrite>(
      '/channels/:channel_id/permissions/:overwrite_id',
      { config: MEMBER, schema: { params: OverwriteParams, body: optionalBody(EditOverwrite) } },
      async (request, reply) => {
        const { channel_id, overwrite_id } = request.params;
        await channels.editOverwrite(
          userOf(request),
          channel_id,
          overwrite_id,
          request.body,
          reasonOf(request),
        );
        return reply.code(204).send();
      },
    );
    app.delete<Overwrite>(
      '/channels/:channel_id/permissions/:overwrite_id',
      { config: MEMBER, schema: { params: OverwriteParams } },
      async (request, reply) => {
        const { channel_id, overwrite_id } = request.params;
        await channels.deleteOverwrite(userOf(request), channel_id, overwrite_id, reasonOf(request));
        return reply.code(204).send();
      },
    );
  };
}

/** The calling user of a guild route (bot or user session). */
export function userOf(request: FastifyRequest): string {
  const principal = request.principal;
  if (!principal) throw new HearthError('GeneralUnauthorized');
  return principal.userId;
}

/** The `X-Audit-Log-Reason` of a guild route. */
export function reasonOf(request: FastifyRequest): string | null {
  return auditLogReason(request.headers['x-audit-log-reason']);
}
