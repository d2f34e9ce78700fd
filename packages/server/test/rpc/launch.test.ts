import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../../test-support/oauth.js';
import { requestAuthorization } from '../../src/rpc/authorize-request.js';
import type { LaunchSettings } from '../../src/rpc/launch-commands.js';
import { acceptActivityInvite, InviteRefused, type LaunchApi } from '../../src/rpc/launch-join.js';

/**
 * Launch commands (seed, Library operations: RegisterLaunchCommand): a game registers through the SDK the
 * command that starts it; the player accepts a friend's activity invite in the platform client (the agent);
 * the agent runs that command with the invite's join secret, never through a shell, unless launching is
 * disabled or the game is not allowed; a game already connected to the agent gets ACTIVITY_JOIN instead.
 */

const SCOPES = 'openid sdk.social_layer';

/** Where a shell would run `touch`: the secret and the arguments try it three ways. */
const PWNED = join(tmpdir(), `hearth-launch-pwned-${process.pid}`);
const SECRET = `s3cret; touch ${PWNED} && $(touch ${PWNED}) \`touch ${PWNED}\``;

/** Real time plus a skew moved past the identify window before each client connects. */
class SkewClock implements Clock {
  skew = 0;
  now(): number {
    return Date.now() + this.skew;
  }
}

/** A small game: writes its argv, environment and folder to `out`, whole (renamed into place). */
const GAME_SCRIPT = `#!${process.execPath}
import { renameSync, writeFileSync } from 'node:fs';
const args = process.argv.slice(2);
const out = args[args.indexOf('--out') + 1];
writeFileSync(out + '.tmp', JSON.stringify({
  args,
  secret: process.env.${LaunchEnvironment.joinSecret} ?? null,
  applicationId: process.env.${LaunchEnvironment.applicationId} ?? null,
  agentToken: process.env.HEARTH_RPC_TOKEN ?? null,
  cwd: process.cwd(),
}));
renameSync(out + '.tmp', out);
`;

interface GameRun {
  args: string[];
  secret: string | null;
  applicationId: string | null;
  agentToken: string | null;
  cwd: string;
}

/** Resolves when `path` appears (the game renames its output into place): an event, not a sleep. */
function appeared(path: string): Promise<GameRun> {
  return new Promise((resolve, reject) => {
    const dir = join(path, '..');
    const read = () => JSON.parse(readFileSync(path, 'utf8')) as GameRun;
    const watcher = watch(dir, () => {
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

interface Player {
  id: string;
  username: string;
  sessionToken: string;
  client: sdkpp.Client;
  invites: ActivityInvite[];
}

describe('RegisterLaunchCommand and the agent launching a game for an accepted invite', () => {
  let hearth: TestHearth;
  let game: TestGame;
  let tmp: string;
  let registry: string;
  let script: string;
  let host: Player;
  let guest: Player;
  const clients: sdkpp.Client[] = [];
  const clock = new SkewClock();

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
    game = await createGame(hearth);
    await hearth.services.applications.adminUpdate(game.id, {
      grant_flags: ['CommunicationFeaturesApproved'],
    });
    tmp = mkdtempSync(join(tmpdir(), 'hearth-launch-'));
    registry = join(tmp, 'registry');
    script = join(tmp, 'game dir', 'game.mjs');
    rmSync(join(tmp, 'game dir'), { recursive: true, force: true });
    await import('node:fs').then((fs) => fs.mkdirSync(join(tmp, 'game dir')));
    writeFileSync(script, GAME_SCRIPT);
    chmodSync(script, 0o755);
    host = await player('host');
    guest = await player('guest');
    await befriend(host, guest);
    await openParty();
  });
  afterAll(async () => {
    for (const client of clients) client.Disconnect();
    await hearth.close();
    rmSync(tmp, { recursive: true, force: true });
    rmSync(PWNED, { force: true });
  });

  async function player(prefix: string): Promise<Player> {
    const username = `${prefix}${Math.random().toString(36).slice(2, 9)}`;
    const created = await createPlayer(hearth, username);
    const tokens = await grantTokens(hearth, game, created.token, SCOPES);
    const client = new sdkpp.Client(`${hearth.url}/api`, hearth.url, { launchCommandsDir: registry });
    clients.push(client);
    client.SetApplicationId(game.id);
    const invites: ActivityInvite[] = [];
    client.SetActivityInviteCreatedCallback((invite) => invites.push(invite));
    const ready = new Promise<void>((resolve) =>
      client.SetStatusChangedCallback((status) => {
        if (status === sdkpp.Client.Status.Ready) resolve();
      }),
    );
    clock.skew += IDENTIFY_WINDOW_MS;
    await client.UpdateToken(AuthorizationTokenType.Bearer, tokens.access_token);
    client.Connect();
    await ready;
    return { id: created.user.id, username, sessionToken: created.token, client, invites };
  }

  async function befriend(a: Player, b: Player): Promise<void> {
    const created = new Promise<void>((resolve) =>
      a.client.SetRelationshipCreatedCallback(() => {
        if (a.client.GetRelationshipHandle(b.id).DiscordRelationshipType() === RelationshipType.Friend)
          resolve();
      }),
    );
    expect((await a.client.SendFriendRequest(b.username)).Successful()).toBe(true);
    const accepted = await hearth.api(`/users/@me/relationships/${a.id}`, {
      method: 'PUT',
      auth: b.sessionToken,
      body: {},
    });
    expect(accepted.status).toBe(204);
    await created;
  }

  /** The agent's link: the player's own session token, as `hearth rpc` signs in. */
  function agentLink(token: string): LaunchApi {
    return {
      async api(path, request = {}) {
        const response = await hearth.api(path, {
          method: request.method ?? 'GET',
          auth: token,
          ...(request.body === undefined ? {} : { body: request.body }),
        });
        const text = await response.text();
        return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
      },
    };
  }

  /** The host, in a party with the join secret SECRET, invites the guest; answers the invite as received. */
  async function invite(): Promise<ActivityInvite> {
    const seen = guest.invites.length;
    const received = new Promise<ActivityInvite>((resolve) =>
      guest.client.SetActivityInviteCreatedCallback((created) => {
        guest.invites.push(created);
        if (guest.invites.length > seen && created.IsValid()) resolve(created);
      }),
    );
    expect((await host.client.SendActivityInvite(guest.id, 'join me')).Successful()).toBe(true);
    return received;
  }

  /** The host's party, opened once: presence updates are limited to 5 per 20 s. */
  async function openParty(): Promise<void> {
    const activity = new Activity();
    activity.SetName('Launch Quest');
    const party = new ActivityParty();
    party.SetId('party-1');
    party.SetCurrentSize(1);
    party.SetMaxSize(4);
    activity.SetParty(party);
    const secrets = new ActivitySecrets();
    secrets.SetJoin(SECRET);
    activity.SetSecrets(secrets);
    const presence = new Promise<void>((resolve) =>
      guest.client.SetUserUpdatedCallback((id) => {
        if (
          String(id) === host.id &&
          guest.client.GetUser(host.id)?.GameActivity()?.Party()?.Id() === 'party-1'
        )
          resolve();
      }),
    );
    expect((await host.client.UpdateRichPresence(activity)).Successful()).toBe(true);
    await presence;
  }

  function settings(overrides: Partial<LaunchSettings> = {}): LaunchSettings {
    return { enabled: true, dir: registry, ...overrides };
  }

  /** No game connected to the agent. */
  const noGames = (): number => 0;

  it('runs the registered command with the join secret, as an argv and never through a shell', async () => {
    const out = join(tmp, 'run-1.json');
    const pwned = PWNED;
    const command = `"${script}" --out "${out}" --name "; touch ${pwned}" '$(touch ${pwned})'`;
    expect(guest.client.RegisterLaunchCommand(game.id, command)).toBe(true);
    const secret = SECRET;
    const received = await invite();
    // The agent's own session token (`hearth rpc --token` from the environment) never reaches the game.
    process.env['HEARTH_RPC_TOKEN'] = guest.sessionToken;
    const outcome = await acceptActivityInvite(
      { link: agentLink(guest.sessionToken), settings: settings(), deliverActivityJoin: noGames },
      { inviterId: host.id, messageId: String(received.MessageId()) },
    ).finally(() => {
      delete process.env['HEARTH_RPC_TOKEN'];
    });
    expect(outcome).toMatchObject({ kind: 'launched', applicationId: game.id, secret });

    const run = await appeared(out);
    expect(run).toEqual({
      args: ['--out', out, '--name', `; touch ${pwned}`, `$(touch ${pwned})`],
      secret,
      applicationId: game.id,
      agentToken: null,
      cwd: join(tmp, 'game dir'),
    });
    expect(existsSync(pwned)).toBe(false);
  });

  it('a game connected to the agent that listens for ACTIVITY_JOIN gets the secret and is not launched again', async () => {
    const out = join(tmp, 'run-2.json');
    expect(guest.client.RegisterLaunchCommand(game.id, `${JSON.stringify(script)} --out ${out}`)).toBe(true);
    const received = await invite();
    const joins: Array<[string, string]> = [];
    const outcome = await acceptActivityInvite(
      {
        link: agentLink(guest.sessionToken),
        settings: settings(),
        deliverActivityJoin: (applicationId, secret) => joins.push([applicationId, secret]),
      },
      { inviterId: host.id, messageId: String(received.MessageId()) },
    );
    expect(outcome).toEqual({ kind: 'dispatched', applicationId: game.id, secret: SECRET, delivered: 1 });
    expect(joins).toEqual([[game.id, SECRET]]);
    expect(existsSync(out)).toBe(false);
  });

  it('disabled launching, or a game outside the allow-list, does not run the command', async () => {
    const out = join(tmp, 'run-3.json');
    expect(guest.client.RegisterLaunchCommand(game.id, `${JSON.stringify(script)} --out ${out}`)).toBe(true);
    const link = agentLink(guest.sessionToken);
    const first = await invite();
    expect(
      await acceptActivityInvite(
        { link, settings: settings({ enabled: false }), deliverActivityJoin: noGames },
        { inviterId: host.id, messageId: String(first.MessageId()) },
      ),
    ).toEqual({
      kind: 'not-launched',
      applicationId: game.id,
      secret: SECRET,
      reason: 'launching is disabled',
    });
    const second = await invite();
    expect(
      await acceptActivityInvite(
        { link, settings: settings({ allow: ['42'] }), deliverActivityJoin: noGames },
        { inviterId: host.id, messageId: String(second.MessageId()) },
      ),
    ).toMatchObject({ kind: 'not-launched', reason: 'the application is not in the launch allow-list' });
    expect(existsSync(out)).toBe(false);
  });

  it('a registration edited after the fact is checked again: a relative path or a vanished executable is not run', async () => {
    const file = join(registry, `${game.id}.json`);
    const link = agentLink(guest.sessionToken);
    writeFileSync(
      file,
      JSON.stringify({ application_id: game.id, command: 'game.mjs --out x', argv: ['game.mjs'] }),
    );
    const first = await invite();
    expect(
      await acceptActivityInvite(
        { link, settings: settings(), deliverActivityJoin: noGames },
        { inviterId: host.id, messageId: String(first.MessageId()) },
      ),
    ).toMatchObject({ kind: 'not-launched', reason: 'the executable must be an absolute path' });
    const gone = join(tmp, 'gone');
    writeFileSync(file, JSON.stringify({ application_id: game.id, command: gone, argv: [gone] }));
    const second = await invite();
    expect(
      await acceptActivityInvite(
        { link, settings: settings(), deliverActivityJoin: noGames },
        { inviterId: host.id, messageId: String(second.MessageId()) },
      ),
    ).toMatchObject({ kind: 'not-launched', reason: `${gone} does not exist` });
    rmSync(file);
    const third = await invite();
    expect(
      await acceptActivityInvite(
        { link, settings: settings(), deliverActivityJoin: noGames },
        { inviterId: host.id, messageId: String(third.MessageId()) },
      ),
    ).toMatchObject({ kind: 'not-launched', reason: 'the application registered no launch command' });
  });

  it("someone else's invite, or a malformed id, is refused by the server and launches nothing", async () => {
    const received = await invite();
    const stranger = await createPlayer(hearth, `stranger${Math.random().toString(36).slice(2, 9)}`);
    const refusal = await acceptActivityInvite(
      { link: agentLink(stranger.token), settings: settings(), deliverActivityJoin: noGames },
      { inviterId: host.id, messageId: String(received.MessageId()) },
    ).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(InviteRefused);
    expect([(refusal as InviteRefused).status, (refusal as InviteRefused).body]).toEqual([
      404,
      { code: 10008, message: 'Unknown Message' },
    ]);
    const malformed = await acceptActivityInvite(
      { link: agentLink(guest.sessionToken), settings: settings(), deliverActivityJoin: noGames },
      { inviterId: host.id, messageId: '1/../../x' },
    ).catch((error: unknown) => error);
    expect((malformed as InviteRefused).status).toBe(400);
    const anonymous = await acceptActivityInvite(
      { link: agentLink(''), settings: settings(), deliverActivityJoin: noGames },
      { inviterId: host.id, messageId: String(received.MessageId()) },
    ).catch((error: unknown) => error);
    expect((anonymous as InviteRefused).status).toBe(401);
  });

  describe('AUTHORIZE_REQUEST raised through the agent (seed, Events: AUTHORIZE_REQUEST)', () => {
    it("reaches the player's RegisterAuthorizeRequestCallback with the application id and the scopes", async () => {
      const requests: Array<[bigint, string]> = [];
      const arrived = new Promise<void>((resolve) =>
        guest.client.RegisterAuthorizeRequestCallback((applicationId, scopes) => {
          requests.push([applicationId, scopes]);
          if (requests.length === 2) resolve();
        }),
      );
      const hostRequests: unknown[] = [];
      host.client.RegisterAuthorizeRequestCallback((...args) => hostRequests.push(args));
      const link = agentLink(guest.sessionToken);
      expect(
        await requestAuthorization(link, {
          applicationId: game.id,
          scopes: 'openid sdk.social_layer guilds',
        }),
      ).toEqual({ status: 204, body: null });
      expect(await requestAuthorization(link, { applicationId: game.id })).toEqual({
        status: 204,
        body: null,
      });
      await arrived;
      expect(requests).toEqual([
        [BigInt(game.id), 'openid sdk.social_layer guilds'],
        [BigInt(game.id), 'openid sdk.social_layer'],
      ]);
      // Another player's sessions hear nothing of it.
      expect(hostRequests).toEqual([]);
    });

    it('refuses an unknown application, an unknown scope, and a caller that is not the platform client', async () => {
      const link = agentLink(guest.sessionToken);
      expect(await requestAuthorization(link, { applicationId: '42' })).toEqual({
        status: 404,
        body: { code: 10002, message: 'Unknown Application' },
      });
      const badScope = await requestAuthorization(link, { applicationId: game.id, scopes: 'openid root' });
      expect(badScope.status).toBe(400);
      expect(badScope.body).toMatchObject({
        code: 50035,
        errors: { scopes: { _errors: [{ code: 'BASE_TYPE_INVALID' }] } },
      });
      expect((await requestAuthorization(link, { applicationId: 'not-an-id' })).status).toBe(400);
      // A game's token cannot make its player authorize another game: only the platform client's session may.
      const tokens = await grantTokens(hearth, game, guest.sessionToken, SCOPES);
      const asGame = await requestAuthorization(agentLink(`Bearer ${tokens.access_token}`), {
        applicationId: game.id,
      });
      expect(asGame.status).toBe(401);
    });
  });
});
