import { RpcLimits } from '@hearth/protocol';
import { type Command, Option } from 'commander';
import { RpcAgent, type RpcAgentOptions } from './agent.js';
import { authorizeRequestCommand } from './authorize-request.js';
import { launchSettingsOf, withLaunchOptions } from './launch-options.js';
import { ServerLink } from './server-link.js';

/** The agent's settings read from `hearth rpc` (and `hearth serve --rpc`) options. */
export interface RpcCommandOptions {
  server?: string;
  token?: string;
  login?: string;
  password?: string;
  ipcDir?: string;
  ipc?: boolean;
  websocket?: boolean;
  wsPortBase?: string;
  /** `--no-launch`, `--launch-allow`, `--launch-commands-dir` (launch-options.ts). */
  launch?: boolean;
  launchAllow?: string[];
  launchCommandsDir?: string;
}

/** Adds the agent's options to a command, each with its environment variable (README: Local RPC). */
export function withRpcOptions(command: Command): Command {
  return withLaunchOptions(command)
    .addOption(new Option('--token <token>', "the signed-in user's session token").env('HEARTH_RPC_TOKEN'))
    .addOption(
      new Option('--login <login>', 'sign in with this username or email instead').env('HEARTH_RPC_LOGIN'),
    )
    .addOption(new Option('--password <password>', 'the password of --login').env('HEARTH_RPC_PASSWORD'))
    .addOption(
      new Option('--ipc-dir <dir>', 'directory of discord-ipc-N (default: as clients search it)').env(
        'HEARTH_RPC_IPC_DIR',
      ),
    )
    .addOption(new Option('--no-ipc', 'do not serve the IPC socket'))
    .addOption(new Option('--no-websocket', 'do not serve the loopback WebSocket'))
    .addOption(
      new Option('--ws-port-base <port>', 'first WebSocket port tried (ten are tried)')
        .env('HEARTH_RPC_WS_PORT_BASE')
        .default(String(RpcLimits.wsPortBase)),
    );
}

/** `hearth serve --rpc`: an agent beside the server, signed in with --rpc-token. */
export function withServeRpcOptions(command: Command): Command {
  return command
    .addOption(new Option('--rpc', 'also run the local RPC agent against this server'))
    .addOption(new Option('--rpc-token <token>', "the agent's user session token").env('HEARTH_RPC_TOKEN'))
    .addOption(new Option('--rpc-ipc-dir <dir>', "the agent's IPC directory").env('HEARTH_RPC_IPC_DIR'))
    .addOption(
      new Option('--rpc-ws-port-base <port>', "the agent's first WebSocket port")
        .env('HEARTH_RPC_WS_PORT_BASE')
        .default(String(RpcLimits.wsPortBase)),
    );
}

/** The agent's options of `hearth serve --rpc`, or undefined without --rpc. */
export function serveRpcOptions(options: Record<string, unknown>): RpcCommandOptions | undefined {
  if (options['rpc'] !== true) return undefined;
  const text = (name: string) => (typeof options[name] === 'string' ? (options[name] as string) : undefined);
  const token = text('rpcToken');
  const ipcDir = text('rpcIpcDir');
  const wsPortBase = text('rpcWsPortBase');
  return {
    ...(token ? { token } : {}),
    ...(ipcDir ? { ipcDir } : {}),
    ...(wsPortBase ? { wsPortBase } : {}),
  };
}

/** `hearth rpc`: the local agent, signed in to a Hearth server, until SIGINT or SIGTERM. */
export function rpcCommand(program: Command): void {
  const rpc = withRpcOptions(
    program
      .command('rpc')
      .description("serve games on this machine over local RPC (IPC and WebSocket) as the platform's client")
      .addOption(
        new Option('--server <url>', 'the Hearth server (HTTP base URL)')
          .env('HEARTH_RPC_SERVER')
          .default('http://127.0.0.1:8080'),
      ),
  ).action(async (options: RpcCommandOptions) => {
    const agent = await startAgent(options.server ?? 'http://127.0.0.1:8080', options);
    stopOnSignal(agent);
  });
  authorizeRequestCommand(rpc, {
    link: (serverUrl, token) => new ServerLink(serverUrl, token),
    signIn: (serverUrl, login, password) => ServerLink.signIn(serverUrl, login, password),
    out: (line) => process.stdout.write(`${line}\n`),
    fail: (message) => new RpcCommandError(message),
  });
}

/** Starts an agent from command options; refuses a missing token or a bad port in one line. */
export async function startAgent(serverUrl: string, options: RpcCommandOptions): Promise<RpcAgent> {
  let token = options.token;
  if (!token && options.login && options.password) {
    token = await ServerLink.signIn(serverUrl, options.login, options.password).catch((error: Error) => {
      throw new RpcCommandError(error.message);
    });
  }
  if (!token) {
    throw new RpcCommandError(
      'a user token is required: --token or HEARTH_RPC_TOKEN (or --login and --password)',
    );
  }
  const portBase = Number(options.wsPortBase ?? RpcLimits.wsPortBase);
  if (!Number.isInteger(portBase) || portBase < 1 || portBase > 65535 - RpcLimits.wsPortCount) {
    throw new RpcCommandError('--ws-port-base must be a port number');
  }
  let launch: RpcAgentOptions['launch'];
  try {
    launch = launchSettingsOf(options as Record<string, unknown>);
  } catch (error) {
    throw new RpcCommandError((error as Error).message);
  }
  const agentOptions: RpcAgentOptions = {
    serverUrl,
    token,
    launch,
    ipc: options.ipc === false ? false : options.ipcDir ? { directory: options.ipcDir } : {},
    websocket: options.websocket === false ? false : { portBase },
    log: (message, fields) => process.stderr.write(`${message} ${JSON.stringify(fields ?? {})}\n`),
  };
  const agent = await RpcAgent.start(agentOptions);
  const where = [
    agent.ipcPath ? `ipc ${agent.ipcPath}` : undefined,
    agent.wsPort ? `ws ws://127.0.0.1:${agent.wsPort}` : undefined,
  ].filter(Boolean);
  process.stdout.write(`hearth rpc serving ${String(agent.user['username'])} on ${where.join(', ')}\n`);
  return agent;
}

export function stopOnSignal(agent: RpcAgent): void {
  const stop = () => {
    agent.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** A refusal of the `rpc` command's options, told in one line. */
export class RpcCommandError extends Error {}
