import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { HearthError } from '../../kernel/errors.js';
import type { ExternalIdentity } from '../accounts/providers.js';
import type { AccountsService } from '../accounts/service.js';

/** One game identity of the player (the SDK's UserApplicationProfileHandle). */
export const ApplicationProfileObject = Type.Object({
  avatar_hash: Type.String(),
  metadata: Type.String(),
  provider_id: Type.Union([Type.String(), Type.Null()]),
  provider_issued_user_id: Type.String(),
  provider_type: Type.String(),
  username: Type.String(),
});

export interface ApplicationProfilesDeps {
  accounts: AccountsService;
  identitiesOf(userId: string, applicationId: string): Promise<ExternalIdentity[]>;
}

/**
 * The player's profiles in the game that holds the token: one per external identity linked to the account
 * (provisional accounts' identity providers), with the account's name and avatar standing for the profile's.
 */
export async function applicationProfiles(
  deps: ApplicationProfilesDeps,
  userId: string,
  applicationId: string,
) {
  const user = await deps.accounts.getUser(userId);
  if (!user) throw new HearthError('UnknownUser');
  const identities = await deps.identitiesOf(userId, applicationId);
  return identities.map((identity) => ({
    avatar_hash: user.avatar ?? '',
    // Hearth keeps no provider metadata: an empty object, as JSON text.
    metadata: '{}',
    provider_id: identity.providerId === '' ? null : identity.providerId,
    provider_issued_user_id: identity.externalUserId,
    provider_type: identity.providerType,
    username: user.globalName ?? user.username,
  }));
}

/** `GET /users/@me/application-profiles` (Hearth's route: the platform publishes none for this SDK call). */
export function applicationProfilesRoutes(deps: ApplicationProfilesDeps): FastifyPluginAsync {
  return async (app) => {
    app.get(
      '/users/@me/application-profiles',
      {
        config: { auth: { bearer: [] } },
        schema: { response: { 200: Type.Array(ApplicationProfileObject) } },
      },
      async (request) => {
        const principal = request.principal;
        if (principal?.kind !== 'bearer') throw new HearthError('GeneralUnauthorized');
        return applicationProfiles(deps, principal.userId, principal.applicationId);
      },
    );
  };
}
