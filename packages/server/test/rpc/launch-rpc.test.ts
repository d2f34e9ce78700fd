import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IDENTIFY_WINDOW_MS, LaunchEnvironment } from '@hearth/protocol';
import {
  Activity,
  type ActivityInvite,
  ActivityParty,
  ActivitySecrets,
  AuthorizationTokenType,
  RelationshipType,
  sdkpp,
} from '@hearth/sdk';
import type { Clock } from '@hearth/server';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer, grantTokens, type TestGame } from '../../../../test-support/oauth.js';
import type { RpcAgent } from '../../src/rpc/agent.js';
import { RpcCommandError, rpcCommand } from '../../src/rpc/cli-command.js';
import { launchSettingsOf, withLaunchOptions } from '../../src/rpc/launch-options.js';
import { ipcDir, RawIpcClient, rpcGame, startAgent } from './rpc-support.js';

/**
 * The agent in the platform client's role for invites and authorization requests (seed, Library operations:
 * RegisterLaunchCommand, RegisterAuthorizeRequestCallback; PROTOCOL.md §H): an invite reaches a client of the
 * agent as ACTIVITY_INVITE; ACCEPT_ACTIVITY_INVITE launches the game the SDK registered, with the join
 * secret, or hands ACTIVITY_JOIN to the game when it is connected; `hearth rpc authorize-request` reaches the
 * game's RegisterAuthorizeRequestCallback.
 */

const SECRET = 'party-secret; touch nothing';

/** Writes argv and the launch environment to `--out`, whole. */
const GAME_SCRIPT = `#!${process.execPath}
import { renameSync, writeFileSync } from 'node:fs';
const args = process.argv.slice(2);
const out = args[args.indexOf('--out') + 1];
writeFileSync(out + '.tmp', JSON.stringify({
  args,
  secret: process.env.${LaunchEnvironment.joinSecret} ?? null,
  applicationId: process.env.${LaunchEnvironment.applicationId} ?? null,
}));
renameSync(out + '.tmp', out);
`;

function appeared(path: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const read = () => JSON.parse(readFileSync(path, 'utf8')) as unknown;
    const watcher = watch(join(path, '..'), () => {
      if (!existsSync(path)) return;
      watcher.close();
      clearTimeout(timer);
      resolve(read());
    });
    const timer = setTimeout(() => {
      watcher.close();
      reject(new Error(`${path} never appeared`));
    }, 10_000);
    if (existsSync(path)) {
      watcher.close();
      clearTimeout(timer);
      resolve(read());
    }
  });
}

describe('the agent as the platform client: ACCEPT_ACTIVITY_INVITE and authorize requests', () => {
  let skew = 0;
  const clock: Clock = { now: () => Date.now() + skew };
  let hearth: TestHearth;
  let game: TestGame;
  let tmp: string;
  let registry: string;
  let script: string;
  let ipc: ReturnType<typeof ipcDir>;
  let agent: RpcAgent;
  let host: { id: string; username: string; client: sdkpp.Client };
  let guest: { id: string; username: string; token: string; client: sdkpp.Client };
  const clients: sdkpp.Client[] = [];
  const raws: RawIpcClient[] = [];

  async function sdkClient(token: string): Promise<sdkpp.Client> {
    const tokens = await grantTokens(hearth, game, token, 'openid sdk.social_layer');
    const client = new sdkpp.Client(`${hearth.url}/api`, hearth.url, { launchCommandsDir: registry });
    clients.push(client);
    client.SetApplicationId(game.id);
    const ready = new Promise<void>((resolve) =>
      client.SetStatusChangedCallback((status) => {
        if (status === sdkpp.Client.Status.Ready) resolve();
      }),
    );
    skew += IDENTIFY_WINDOW_MS;
    await client.UpdateToken(AuthorizationTokenType.Bearer, tokens.access_token);
    client.Connect();
    await ready;
    return client;
  }

  async function player(prefix: string) {
    const username = `${prefix}${Math.random().toString(36).slice(2, 9)}`;
    const created = await createPlayer(hearth, username);
    return { id: created.user.id, username, token: created.token, client: await sdkClient(created.token) };
  }

  /** A client of the agent for the game: handshake, READY, AUTHENTICATE with `scope` when given. */
  async function rpcClient(scope?: string): Promise<RawIpcClient> {
    const raw = await RawIpcClient.connect(agent.ipcPath!);
    raws.push(raw);
    raw.handshake(game.id);
    await raw.next((frame) => (frame.data as { evt?: string }).evt === 'READY');
    if (scope) {
      const tokens = await grantTokens(hearth, game, guest.token, scope);
      const authenticated = await raw.command('AUTHENTICATE', { access_token: tokens.access_token });
      expect((authenticated.data as { evt: unknown }).evt).toBeNull();
    }
    return raw;
  }

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
    game = await rpcGame(hearth);
    await hearth.services.applications.adminUpdate(game.id, {
      grant_flags: ['CommunicationFeaturesApproved'],
    });
    tmp = mkdtempSync(join(tmpdir(), 'hearth-launch-rpc-'));
    registry = join(tmp, 'registry');
    mkdirSync(join(tmp, 'game'));
    script = join(tmp, 'game', 'game.mjs');
    writeFileSync(script, GAME_SCRIPT);
    chmodSync(script, 0o755);
    ipc = ipcDir();
    host = await player('host');
    guest = await player('guest');
    // Friends, so that the guest sees the host's party and may be invited to it.
    const befriended = new Promise<void>((resolve) =>
      host.client.SetRelationshipCreatedCallback(() => {
        if (host.client.GetRelationshipHandle(guest.id).DiscordRelationshipType() === RelationshipType.Friend)
          resolve();
      }),
    );
    expect((await host.client.SendFriendRequest(guest.username)).Successful()).toBe(true);
    expect((await guest.client.AcceptFriendRequest(host.id)).Successful()).toBe(true);
    await befriended;
    const activity = new Activity();
    activity.SetName('RPC Quest');
    const party = new ActivityParty();
    party.SetId('rpc-party');
    party.SetCurrentSize(1);
    party.SetMaxSize(4);
    activity.SetParty(party);
    const secrets = new ActivitySecrets();
    secrets.SetJoin(SECRET);
    activity.SetSecrets(secrets);
    expect((await host.client.UpdateRichPresence(activity)).Successful()).toBe(true);
    agent = await startAgent(hearth, guest.token, {
      ipc: { directory: ipc.path },
      websocket: false,
      launch: { enabled: true, dir: registry },
    });
  });
  afterAll(async () => {
    for (const raw of raws) raw.close();
    for (const client of clients) client.Disconnect();
    await agent?.close();
    await hearth.close();
    ipc.remove();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** The host invites the guest; the launcher (subscribed to ACTIVITY_INVITE) hears of it through the agent. */
  async function invite(
    launcher: RawIpcClient,
  ): Promise<{ message_id: string; channel_id: string; user: { id: string } }> {
    const received = new Promise<ActivityInvite>((resolve) =>
      guest.client.SetActivityInviteCreatedCallback((created) => {
        if (created.IsValid()) resolve(created);
      }),
    );
    expect((await host.client.SendActivityInvite(guest.id, 'come')).Successful()).toBe(true);
    const frame = await launcher.next((f) => (f.data as { evt?: string }).evt === 'ACTIVITY_INVITE');
    const data = (frame.data as { data: { message_id: string; channel_id: string; user: { id: string } } })
      .data;
    expect(data.message_id).toBe(String((await received).MessageId()));
    return data;
  }

  const accept = (
    raw: RawIpcClient,
    data: { message_id: string; channel_id: string; user: { id: string } },
  ) =>
    raw.command('ACCEPT_ACTIVITY_INVITE', {
      type: 1,
      user_id: data.user.id,
      message_id: data.message_id,
      channel_id: data.channel_id,
      session_id: '1',
    });

  it('ACCEPT_ACTIVITY_INVITE launches the game the SDK registered, with the join secret', async () => {
    const out = join(tmp, 'launched.json');
    const local = new sdkpp.Client(`${hearth.url}/api`, hearth.url, { launchCommandsDir: registry });
    expect(local.RegisterLaunchCommand(game.id, `${script} --out ${out} --mode "co op"`)).toBe(true);

    const launcher = await rpcClient('rpc');
    const subscribed = await launcher.command('SUBSCRIBE', {}, 'ACTIVITY_INVITE');
    expect((subscribed.data as { data: unknown }).data).toEqual({ evt: 'ACTIVITY_INVITE' });
    const data = await invite(launcher);
    const reply = await accept(launcher, data);
    expect(reply.data).toMatchObject({ cmd: 'ACCEPT_ACTIVITY_INVITE', evt: null, data: {} });
    expect(await appeared(out)).toEqual({
      args: ['--out', out, '--mode', 'co op'],
      secret: SECRET,
      applicationId: game.id,
    });
  });

  it('a connected game that subscribed to ACTIVITY_JOIN gets the secret instead of a second launch', async () => {
    const out = join(tmp, 'not-launched.json');
    const local = new sdkpp.Client(`${hearth.url}/api`, hearth.url, { launchCommandsDir: registry });
    expect(local.RegisterLaunchCommand(game.id, `${script} --out ${out}`)).toBe(true);
    const running = await rpcClient();
    const joinSubscription = await running.command('SUBSCRIBE', {}, 'ACTIVITY_JOIN');
    expect((joinSubscription.data as { evt: unknown }).evt).toBeNull();
    const launcher = await rpcClient('rpc');
    await launcher.command('SUBSCRIBE', {}, 'ACTIVITY_INVITE');
    const data = await invite(launcher);
    expect((await accept(launcher, data)).data).toMatchObject({ evt: null, data: {} });
    const joined = await running.next((f) => (f.data as { evt?: string }).evt === 'ACTIVITY_JOIN');
    expect(joined.data).toEqual({
      cmd: 'DISPATCH',
      evt: 'ACTIVITY_JOIN',
      data: { secret: SECRET },
      nonce: null,
    });
    expect(existsSync(out)).toBe(false);
  });

  it('refuses ACCEPT_ACTIVITY_INVITE before AUTHENTICATE (4006), with bad arguments (4000), for a bad invite (4011)', async () => {
    const anonymous = await rpcClient();
    const refused = await anonymous.command('ACCEPT_ACTIVITY_INVITE', {
      type: 1,
      user_id: host.id,
      message_id: '1',
    });
    expect((refused.data as { evt: string; data: { code: number } }).data.code).toBe(4006);
    const launcher = await rpcClient('rpc');
    for (const args of [
      { type: 2, user_id: host.id, message_id: '1' },
      { type: 1, user_id: 'x', message_id: '1' },
      { type: 1, user_id: host.id, message_id: '1/../2' },
      { type: 1, user_id: host.id },
    ]) {
      const bad = await launcher.command('ACCEPT_ACTIVITY_INVITE', args);
      expect(bad.data).toMatchObject({ evt: 'ERROR', data: { code: 4000 } });
    }
    const unknown = await launcher.command('ACCEPT_ACTIVITY_INVITE', {
      type: 1,
      user_id: host.id,
      message_id: '1',
    });
    expect(unknown.data).toMatchObject({ evt: 'ERROR', data: { code: 4011, message: 'Unknown Message' } });
  });

  it('`hearth rpc authorize-request` reaches the SDK callback with the application id and the scopes', async () => {
    const requests: Array<[bigint, string]> = [];
    const arrived = new Promise<void>((resolve) =>
      guest.client.RegisterAuthorizeRequestCallback((applicationId, scopes) => {
        requests.push([applicationId, scopes]);
        if (requests.length === 2) resolve();
      }),
    );
    const printed: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk));
      return true;
    });
    const run = (args: string[], credentials = ['--token', guest.token]) => {
      const program = new Command().exitOverride();
      rpcCommand(program);
      return program.parseAsync(
        ['rpc', 'authorize-request', '--server', hearth.url, ...credentials, ...args],
        {
          from: 'user',
        },
      );
    };
    try {
      await run(['--application', game.id, '--scopes', 'openid sdk.social_layer guilds']);
      // Signed in with a login and a password, as `hearth rpc --login` is.
      await run(
        ['--application', game.id],
        ['--login', `${guest.username}@example.com`, '--password', 'a long password'],
      );
      const unknown = await run(['--application', '42']).catch((error: unknown) => error);
      expect(unknown).toBeInstanceOf(RpcCommandError);
      expect((unknown as Error).message).toBe(
        'the server refused the authorization request (HTTP 404, code 10002: Unknown Application)',
      );
      const anonymous = await run(['--application', game.id], []).catch((error: unknown) => error);
      expect((anonymous as Error).message).toBe(
        'a user token is required: --token or HEARTH_RPC_TOKEN (or --login and --password)',
      );
    } finally {
      write.mockRestore();
    }
    await arrived;
    expect(requests).toEqual([
      [BigInt(game.id), 'openid sdk.social_layer guilds'],
      [BigInt(game.id), 'openid sdk.social_layer'],
    ]);
    expect(printed).toEqual([
      `authorization requested of application ${game.id}\n`,
      `authorization requested of application ${game.id}\n`,
    ]);
  });
});

describe('the agent launch options', () => {
  const parse = (args: string[]) =>
    launchSettingsOf(withLaunchOptions(new Command().exitOverride()).parse(args, { from: 'user' }).opts());

  it('launch by default; --no-launch turns it off; --launch-allow takes ids, repeated or comma-separated', () => {
    expect(parse([])).toEqual({ enabled: true });
    expect(parse(['--no-launch'])).toEqual({ enabled: false });
    expect(parse(['--launch-allow', '12,34', '--launch-allow', '56', '--launch-commands-dir', '/x'])).toEqual(
      {
        enabled: true,
        allow: ['12', '34', '56'],
        dir: '/x',
      },
    );
    expect(() => parse(['--launch-allow', '12,../x'])).toThrow(
      '--launch-allow takes application ids, not ../x',
    );
  });

  it('each option has its environment variable', () => {
    const env = {
      HEARTH_RPC_NO_LAUNCH: '1',
      HEARTH_RPC_LAUNCH_ALLOW: '11,22',
      HEARTH_LAUNCH_COMMANDS_DIR: '/r',
    };
    Object.assign(process.env, env);
    try {
      expect(parse([])).toEqual({ enabled: false, allow: ['11', '22'], dir: '/r' });
    } finally {
      for (const key of Object.keys(env)) delete process.env[key];
    }
  });
});
