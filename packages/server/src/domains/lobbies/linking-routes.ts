import { Scopes } from '@hearth/protocol';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { HearthError } from '../../kernel/errors.js';
import { parse } from '../../kernel/validation.js';
import type { LobbyLinking } from './linking.js';
import { ChannelLinking, LinkingGuildParams, LinkingLobbyParams } from './linking-schemas.js';
import type { Caller } from './service.js';

/** Players (`Bearer`): lobbies.write links, `guilds` lists a guild's channels as the library shows them. */
const LINKER = { auth: { bearer: [Scopes.LobbiesWrite] } } as const;
const GUILD_READER = { auth: { bearer: [Scopes.Guilds] } } as const;

type Lobby = { Params: Static<typeof LinkingLobbyParams> };
type Guild = { Params: Static<typeof LinkingGuildParams> };

/** Linked channels (PROTOCOL.md §A.3 row 10, §A.5) and the library's GetGuildChannels. */
export function linkingRoutes(linking: LobbyLinking): FastifyPluginAsync {
  return async (app) => {
    app.patch<Lobby>(
      '/lobbies/:lobby_id/channel-linking',
      { config: LINKER, schema: { params: LinkingLobbyParams } },
      async (request) => {
        const { channel_id } = parse(ChannelLinking, request.body ?? {});
        return linking.setLink(callerOf(request), request.params.lobby_id, channel_id ?? null);
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
