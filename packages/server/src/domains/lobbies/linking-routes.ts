import { Scopes } from '@hearth/protocol';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { HearthError } from '../../kernel/errors.js';
import { optionalBody, parse } from '../../kernel/validation.js';
import type { LobbyLinking } from './linking.js';
import {
  ChannelLinking,
  LinkingGuildParams,
  LinkingLobbyParams,
  LinkingMemberParams,
} from './linking-schemas.js';
import type { Caller } from './service.js';

/** Players (`Bearer`): lobbies.write links, `guilds` lists a guild's channels as the library shows them. */
const LINKER = { auth: { bearer: [Scopes.LobbiesWrite] } } as const;
const GUILD_READER = { auth: { bearer: [Scopes.Guilds] } } as const;
const BOT = { auth: { bot: true } } as const;

type Lobby = { Params: Static<typeof LinkingLobbyParams> };
type Guild = { Params: Static<typeof LinkingGuildParams> };
type Member = { Params: Static<typeof LinkingMemberParams> };

/** Linked channels (PROTOCOL.md §A.3 row 10, §A.5) and the library's GetGuildChannels. */
export function linkingRoutes(linking: LobbyLinking): FastifyPluginAsync {
  return async (app) => {
    app.patch<Lobby>(
      '/lobbies/:lobby_id/channel-linking',
      { config: LINKER, schema: { params: LinkingLobbyParams, body: optionalBody(ChannelLinking) } },
      async (request) => {
        const { channel_id } = parse(ChannelLinking, request.body ?? {});
        return linking.setLink(callerOf(request), request.params.lobby_id, channel_id ?? null);
      },
    );
    // Create Lobby Channel Invite for Self (§A.3 row 14) and for User (row 15): 200 `{ code }`.
    app.post<Lobby>(
      '/lobbies/:lobby_id/members/@me/invites',
      { config: LINKER, schema: { params: LinkingLobbyParams } },
      async (request) => {
        const caller = callerOf(request);
        return linking.channelInvite(caller.applicationId, request.params.lobby_id, caller.userId, 'self');
      },
    );
    app.post<Member>(
      '/lobbies/:lobby_id/members/:user_id/invites',
      { config: BOT, schema: { params: LinkingMemberParams } },
      async (request) => {
        const { lobby_id, user_id } = request.params;
        return linking.channelInvite(appOf(request), lobby_id, user_id, 'user');
      },
    );
    // Hearth-only: the platform's library reads this through a route it does not publish (seed: GetGuildChannels).
    app.get<Guild>(
      '/users/@me/guilds/:guild_id/channels',
      { config: GUILD_READER, schema: { params: LinkingGuildParams } },
      async (request) => linking.guildChannels(callerOf(request).userId, request.params.guild_id),
    );
  };
}

function callerOf(request: FastifyRequest): Caller {
  const principal = request.principal;
  if (principal?.kind !== 'bearer') throw new HearthError('GeneralUnauthorized');
  return { applicationId: principal.applicationId, userId: principal.userId };
}

function appOf(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.kind !== 'bot') throw new HearthError('GeneralUnauthorized');
  return principal.applicationId;
}
