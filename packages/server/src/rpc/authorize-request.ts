import type { LaunchApi } from './launch-join.js';

/**
 * An authorization requested from an entry point inside the platform client (seed, Library operations:
 * RegisterAuthorizeRequestCallback; Events: AUTHORIZE_REQUEST): the agent, as the player, asks the server,
 * which delivers AUTHORIZE_REQUEST to the player's sessions of that game, where the SDK calls the game's
 * callback with the application id and the scopes (the SDK's default communication scopes when omitted).
 */
export async function requestAuthorization(
  link: LaunchApi,
  request: { applicationId: string; scopes?: string | undefined },
): Promise<{ status: number; body: unknown }> {
  const answer = await link.api('/users/@me/authorize-requests', {
    method: 'POST',
    body: {
      application_id: request.applicationId,
      ...(request.scopes === undefined ? {} : { scopes: request.scopes }),
    },
  });
  return answer;
}
