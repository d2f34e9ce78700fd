import { type LaunchSettings, lookUpLaunch } from './launch-commands.js';
import { launchGame } from './launch-process.js';

/** The agent's HTTP link to its server, with the agent's own session token. */
export interface LaunchApi {
  api(
    path: string,
    request?: { method?: string; body?: unknown },
  ): Promise<{ status: number; body: unknown }>;
}

export interface ActivityJoinDeps {
  link: LaunchApi;
  settings: LaunchSettings;
  /**
   * ACTIVITY_JOIN `{secret}` to the game's connections to the agent that subscribed to it; answers how many
   * got it. A game running and listening takes the join itself instead of being launched again.
   */
  deliverActivityJoin(applicationId: string, secret: string): number;
  /** Log lines name the component; the join secret is never written. */
  log?(line: string): void;
}

/** How an accepted invite reached its game. */
export type ActivityJoinOutcome =
  | { kind: 'dispatched'; applicationId: string; secret: string; delivered: number }
  | { kind: 'launched'; applicationId: string; secret: string; pid: number }
  | { kind: 'not-launched'; applicationId: string; secret: string; reason: string };

/** The server refused the acceptance: its status and error body ({code, message}). */
export class InviteRefused extends Error {
  readonly status: number;
  readonly body: unknown;

  constructor(status: number, body: unknown) {
    const message = (body as { message?: unknown } | null)?.message;
    super(typeof message === 'string' ? message : `the server answered ${status}`);
    this.status = status;
    this.body = body;
  }
}

/**
 * The player accepts an activity invite in the platform client (RPC ACCEPT_ACTIVITY_INVITE, or the agent's
 * own prompt): the server hands the agent the party's join secret; a running game of that application that
 * listens for ACTIVITY_JOIN gets it, otherwise the game's registered launch command is run with it.
 */
export async function acceptActivityInvite(
  deps: ActivityJoinDeps,
  invite: { inviterId: string; messageId: string },
): Promise<ActivityJoinOutcome> {
  const accepted = await acceptOnServer(deps.link, invite);
  const { applicationId, secret } = accepted;
  const delivered = deps.deliverActivityJoin(applicationId, secret);
  if (delivered > 0) {
    deps.log?.(`rpc launch app=${applicationId}: ACTIVITY_JOIN to ${delivered} running game connection(s)`);
    return { kind: 'dispatched', applicationId, secret, delivered };
  }
  return launchFor(deps, applicationId, secret);
}

/** Runs the registered command of this application with the join secret, when the settings allow. */
export async function launchFor(
  deps: Pick<ActivityJoinDeps, 'settings' | 'log'>,
  applicationId: string,
  secret: string,
): Promise<ActivityJoinOutcome> {
  const lookup = await lookUpLaunch(deps.settings, applicationId);
  if (!lookup.ok) {
    deps.log?.(`rpc launch app=${applicationId}: not launched (${lookup.reason})`);
    return { kind: 'not-launched', applicationId, secret, reason: lookup.reason };
  }
  const started = await launchGame(lookup.plan, secret);
  if (!started.ok) {
    deps.log?.(`rpc launch app=${applicationId}: failed to start (${started.reason})`);
    return { kind: 'not-launched', applicationId, secret, reason: started.reason };
  }
  deps.log?.(`rpc launch app=${applicationId}: started pid=${started.pid}`);
  return { kind: 'launched', applicationId, secret, pid: started.pid };
}

async function acceptOnServer(
  link: LaunchApi,
  invite: { inviterId: string; messageId: string },
): Promise<{ applicationId: string; secret: string }> {
  const snowflake = /^\d{1,20}$/;
  if (!snowflake.test(invite.inviterId) || !snowflake.test(invite.messageId))
    throw new InviteRefused(400, { code: 50035, message: 'Invalid Form Body' });
  const answer = await link.api(
    `/users/${invite.inviterId}/messages/${invite.messageId}/activity-invite/accept`,
    { method: 'POST' },
  );
  const body = answer.body as { application_id?: unknown; secret?: unknown } | null;
  if (answer.status !== 200 || typeof body?.application_id !== 'string' || typeof body.secret !== 'string')
    throw new InviteRefused(answer.status, answer.body);
  return { applicationId: body.application_id, secret: body.secret };
}
