import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IDENTIFY_WINDOW_MS, LaunchCommandLimits, LaunchEnvironment } from '@hearth/protocol';
import { AuthorizationTokenType, LoggingSeverity, sdkpp } from '@hearth/sdk';
import type { Clock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../test-support/oauth.js';
import { Client as BrowserClient } from '../src/browser-client.js';

/**
 * RegisterLaunchCommand (seed, Library operations): the game registers, on this machine, the command by which
 * the platform client (the local agent, `hearth rpc`) launches it for an accepted invite. The registration
 * is a file the agent reads; a bad one is refused with false, written nowhere, and its reason logged. A game
 * launched that way joins the invite's party: the join secret reaches SetActivityJoinCallback once Ready.
 */

const APP = '1234567890123456789';

describe('RegisterLaunchCommand', () => {
  let tmp: string;
  let registry: string;
  let executable: string;

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'hearth-sdk-launch-'));
    registry = join(tmp, 'registry');
    mkdirSync(join(tmp, 'My Game'));
    executable = join(tmp, 'My Game', 'game');
    writeFileSync(executable, '#!/bin/sh\n');
    chmodSync(executable, 0o755);
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  function client(): { client: sdkpp.Client; warnings: string[] } {
    const made = new sdkpp.Client('http://127.0.0.1:1/api', 'http://127.0.0.1:1', {
      launchCommandsDir: registry,
    });
    const warnings: string[] = [];
    made.AddLogCallback((message) => warnings.push(message), LoggingSeverity.Warning);
    return { client: made, warnings };
  }

  const registered = (id = APP) => JSON.parse(readFileSync(join(registry, `${id}.json`), 'utf8')) as unknown;

  it('writes the command and its argv for the application; a new registration replaces the old', () => {
    const { client: game } = client();
    const command = `"${executable}" --full-screen --name 'Player One' "say \\"hi\\""`;
    expect(game.RegisterLaunchCommand(BigInt(APP), command)).toBe(true);
    expect(registered()).toEqual({
      application_id: APP,
      command,
      argv: [executable, '--full-screen', '--name', 'Player One', 'say "hi"'],
    });
    expect(game.RegisterLaunchCommand(APP, `"${executable}"`)).toBe(true);
    expect(registered()).toEqual({ application_id: APP, command: `"${executable}"`, argv: [executable] });
  });

  it('refuses what the agent could not run safely, writes nothing, and logs why', () => {
    const { client: game, warnings } = client();
    const other = '42';
    const notExecutable = join(tmp, 'readme.txt');
    writeFileSync(notExecutable, 'text');
    chmodSync(notExecutable, 0o644);
    const cases: Array<[bigint | string, string, string]> = [
      [other, 'game --full-screen', 'the executable must be an absolute path'],
      [other, './bin/game', 'the executable must be an absolute path'],
      [other, `${tmp}/../etc/game`, 'the executable must be an absolute path'],
      [other, join(tmp, 'missing'), `${join(tmp, 'missing')} does not exist`],
      [other, `"${join(tmp, 'My Game')}"`, `${join(tmp, 'My Game')} is not a file`],
      [other, notExecutable, `${notExecutable} is not executable`],
      [other, 'my-game://join', 'a custom protocol cannot be launched: register the executable'],
      [other, `"${executable} --x`, 'the command has an unterminated quote'],
      [other, `${executable}\n--x`, 'the command holds a control character'],
      [other, '', 'the command is empty'],
      [other, '   ', 'the command names no executable'],
      [
        other,
        `${executable} ${'x'.repeat(LaunchCommandLimits.commandMaxLength - executable.length)}`,
        `the command is longer than ${LaunchCommandLimits.commandMaxLength}`,
      ],
      [
        other,
        `${executable}${' a'.repeat(LaunchCommandLimits.argumentsMax + 1)}`,
        `the command has more than ${LaunchCommandLimits.argumentsMax} arguments`,
      ],
      [0n, executable, 'applicationId must be a non-zero unsigned 64-bit integer'],
      ['12ab', executable, 'applicationId must be a non-zero unsigned 64-bit integer'],
      ['../../etc', executable, 'applicationId must be a non-zero unsigned 64-bit integer'],
    ];
    for (const [applicationId, command, reason] of cases) {
      expect(game.RegisterLaunchCommand(applicationId, command), command).toBe(false);
      expect(warnings.at(-1)).toBe(`RegisterLaunchCommand refused: ${reason}`);
    }
    expect(existsSync(join(registry, `${other}.json`))).toBe(false);
    // The limit itself is accepted: exactly commandMaxLength characters.
    const longest = `"${executable}" ${'x'.repeat(LaunchCommandLimits.commandMaxLength - executable.length - 3)}`;
    expect(longest.length).toBe(LaunchCommandLimits.commandMaxLength);
    expect(game.RegisterLaunchCommand(other, longest)).toBe(true);
  });

  it('in a browser nothing can be launched: false, and why', () => {
    const browser = new BrowserClient('http://127.0.0.1:1/api', 'http://127.0.0.1:1');
    const warnings: string[] = [];
    browser.AddLogCallback((message) => warnings.push(message), LoggingSeverity.Warning);
    expect(browser.RegisterLaunchCommand(APP, executable)).toBe(false);
    expect(warnings).toEqual(['RegisterLaunchCommand refused: this environment cannot launch programs']);
  });
});

describe('a game launched by the agent for an accepted invite', () => {
  let skew = 0;
  const clock: Clock = { now: () => Date.now() + skew };
  let hearth: TestHearth;
  let game: TestGame;
  const clients: sdkpp.Client[] = [];

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
    game = await createGame(hearth);
  });
  afterAll(async () => {
    for (const client of clients) client.Disconnect();
    await hearth.close();
  });

  /** A client made while the agent's launch environment is set, connected until Ready. */
  async function launched(
    env: Record<string, string>,
    applicationId: string,
    joins: string[],
  ): Promise<void> {
    const saved = { ...process.env };
    Object.assign(process.env, env);
    let client: sdkpp.Client;
    try {
      client = new sdkpp.Client(`${hearth.url}/api`, hearth.url);
    } finally {
      for (const key of Object.keys(env)) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    }
    clients.push(client);
    client.SetApplicationId(applicationId);
    client.SetActivityJoinCallback((secret) => joins.push(secret));
    const player = await createPlayer(hearth, `launched${Math.random().toString(36).slice(2, 9)}`);
    const tokens = await grantTokens(hearth, game, player.token, 'openid sdk.social_layer');
    const ready = new Promise<void>((resolve) =>
      client.SetStatusChangedCallback((status) => {
        if (status === sdkpp.Client.Status.Ready) resolve();
      }),
    );
    skew += IDENTIFY_WINDOW_MS;
    await client.UpdateToken(AuthorizationTokenType.Bearer, tokens.access_token);
    client.Connect();
    await ready;
  }

  it('gets the join secret at SetActivityJoinCallback once Ready', async () => {
    const joins: string[] = [];
    await launched(
      { [LaunchEnvironment.joinSecret]: 'join; $(secret)', [LaunchEnvironment.applicationId]: game.id },
      game.id,
      joins,
    );
    expect(joins).toEqual(['join; $(secret)']);
  });

  it('another application, or no secret, joins nothing', async () => {
    const joins: string[] = [];
    await launched(
      { [LaunchEnvironment.joinSecret]: 'for another game', [LaunchEnvironment.applicationId]: '42' },
      game.id,
      joins,
    );
    await launched({ [LaunchEnvironment.applicationId]: game.id }, game.id, joins);
    expect(joins).toEqual([]);
  });
});
