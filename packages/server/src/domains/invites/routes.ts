import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { optionalBody } from '../../kernel/validation.js';
import { reasonOf, userOf } from '../channels/routes.js';
import {
  ChannelParams,
  CreateInvite,
  GetInviteQuery,
  GuildParams,
  InviteParams,
  normalizeCreateInvite,
  UpdateTargetUsers,
} from './schemas.js';
import type { InvitesService } from './service.js';

/** Guild invite routes take bot tokens and user sessions (GUILDS.md §3.6). */
const MEMBER = { auth: { bot: true, user: true } } as const;
/** Multipart bodies may carry the target users file as a file part. */
const TARGET_USERS_FILE = ['target_users_file'] as const;

type Channel = { Params: Static<typeof ChannelParams> };
type Guild = { Params: Static<typeof GuildParams> };
type Invite = { Params: Static<typeof InviteParams> };

export function invitesRoutes(invites: InvitesService): FastifyPluginAsync {
  return async (app) => {
    app.post<Channel>(
      '/channels/:channel_id/invites',
      {
        config: { ...MEMBER, textFiles: TARGET_USERS_FILE },
        schema: { params: ChannelParams, body: optionalBody(CreateInvite) },
        // A form's fields arrive as text (`max_age=60`, `role_ids=1,2`): read as the JSON body's types first.
        preValidation: async (request) => {
          if (request.body != null) request.body = normalizeCreateInvite(request.body, isForm(request));
        },
      },
      async (request) =>
        invites.createChannelInvite(userOf(request), request.params.channel_id, request.body, {
          form: isForm(request),
          reason: reasonOf(request),
        }),
    );
    app.get<Channel>(
      '/channels/:channel_id/invites',
      { config: MEMBER, schema: { params: ChannelParams } },
      async (request) => invites.channelInvites(userOf(request), request.params.channel_id),
    );
    app.get<Guild>(
      '/guilds/:guild_id/invites',
      { config: MEMBER, schema: { params: GuildParams } },
      async (request) => invites.guildInvites(userOf(request), request.params.guild_id),
    );

    // Resolving an invite needs no credentials (OAS: security `{}` or a bot token).
    app.get<Invite & { Querystring: Static<typeof GetInviteQuery> }>(
      '/invites/:code',
      { schema: { params: InviteParams, querystring: GetInviteQuery } },
      async (request) => invites.getInvite(request.params.code, request.query),
    );
    app.delete<Invite>(
      '/invites/:code',
      { config: MEMBER, schema: { params: InviteParams } },
      async (request) => invites.deleteInvite(userOf(request), request.params.code, reasonOf(request)),
    );
    // Accepting is a user's act: bots get 20001.
    app.post<Invite>(
      '/invites/:code',
      { config: { auth: { user: true } }, schema: { params: InviteParams } },
      async (request) => invites.acceptInvite(userOf(request), request.params.code),
    );

    app.get<Invite>(
      '/invites/:code/target-users',
      { config: MEMBER, schema: { params: InviteParams } },
      async (request, reply) => {
        const csv = await invites.targetUsers.get(userOf(request), request.params.code);
        return reply.type('text/csv').send(csv);
      },
    );
    app.put<Invite>(
      '/invites/:code/target-users',
      {
        config: { ...MEMBER, textFiles: TARGET_USERS_FILE },
        schema: { params: InviteParams, body: optionalBody(UpdateTargetUsers) },
      },
      async (request, reply) => {
        await invites.targetUsers.update(userOf(request), request.params.code, request.body);
        return reply.code(204).send();
      },
    );
    app.get<Invite>(
      '/invites/:code/target-users/job-status',
      { config: MEMBER, schema: { params: InviteParams } },
      async (request) => invites.targetUsers.jobStatus(userOf(request), request.params.code),
    );
  };
}

/** Bodies whose fields all arrive as text. */
function isForm(request: FastifyRequest): boolean {
  const type = request.headers['content-type'] ?? '';
  return /^(multipart\/form-data|application\/x-www-form-urlencoded)/i.test(type);
}
