import type { Command } from 'commander';
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

/** How the subcommand reaches the server and where it prints. */
export interface AuthorizeRequestIo {
  link(serverUrl: string, token: string): LaunchApi;
  /** `--login` and `--password` instead of `--token`: a session token, as the agent signs in. */
  signIn(serverUrl: string, login: string, password: string): Promise<string>;
  out(line: string): void;
  /** The CLI's one-line refusal. */
  fail(message: string): Error;
}

/**
 * `hearth rpc authorize-request --application <id> [--scopes "<scopes>"]`: the player, signed in as the
 * agent is, asks a game to authorize them, as the platform client's entry points do.
 */
export function authorizeRequestCommand(rpc: Command, io: AuthorizeRequestIo): Command {
  return rpc
    .command('authorize-request')
    .description("ask a game running for this player to authorize (the SDK's AUTHORIZE_REQUEST)")
    .requiredOption('--application <id>', 'the application to authorize')
    .option('--scopes <scopes>', "space-separated scopes (default: the SDK's communication scopes)")
    .action(async (_options: unknown, command: Command) => {
      // --server, --token (or --login, --password) are the agent's own (`hearth rpc`), with their environment variables.
      const options = command.optsWithGlobals<{
        application: string;
        scopes?: string;
        server?: string;
        token?: string;
        login?: string;
        password?: string;
      }>();
      const server = options.server ?? 'http://127.0.0.1:8080';
      let token = options.token;
      if (!token && options.login && options.password) {
        token = await io.signIn(server, options.login, options.password).catch((error: Error) => {
          throw io.fail(error.message);
        });
      }
      if (!token)
        throw io.fail('a user token is required: --token or HEARTH_RPC_TOKEN (or --login and --password)');
      const answer = await requestAuthorization(io.link(server, token), {
        applicationId: options.application,
        scopes: options.scopes,
      });
      if (answer.status !== 204) {
        const body = answer.body as { code?: unknown; message?: unknown } | null;
        throw io.fail(
          `the server refused the authorization request (HTTP ${answer.status}${
            typeof body?.code === 'number' ? `, code ${body.code}: ${String(body.message)}` : ''
          })`,
        );
      }
      io.out(`authorization requested of application ${options.application}`);
    });
}
