import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEAM_PSEUDO_USER_FLAG } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer } from '../../../../test-support/oauth.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';

const BIN = fileURLToPath(new URL('../../bin/hearth.js', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'hearth-teams-cli-'));
const DATABASE_URL = `sqlite:${join(directory, 'h.sqlite')}`;

/** One `hearth …` command on the suite's database, without the parent's HEARTH_* variables. */
function hearth(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('HEARTH_')));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...env, HEARTH_DATABASE_URL: DATABASE_URL, HEARTH_LOG_LEVEL: 'warn' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function json<T = Record<string, string>>(args: string[]): Promise<T> {
  const result = await hearth([...args, '--json']);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as T;
}

interface TeamBody {
  id: string;
  name: string;
  owner_user_id: string;
  members: Array<{ user: { id: string }; role: string; membership_state: number; team_id: string }>;
}

let server: TestHearth;
let owner: string;
let admin: string;
let developer: string;
let viewer: string;
let app: { id: string; botToken: string; botUserId: string };
let team: TeamBody;

// Each command is a process of its own (seconds each on a loaded machine): the fixtures are made through the
// in-process server on the same database, and only what is under test goes through the CLI.
beforeAll(async () => {
  server = await startHearth({ databaseUrl: DATABASE_URL });
  const ids = await Promise.all(
    ['owner1', 'admin1', 'dev1', 'viewer1'].map(async (name) => (await createPlayer(server, name)).user.id),
  );
  [owner, admin, developer, viewer] = ids as [string, string, string, string];
  const created = await server.services.applications.createApplication({
    name: 'Team Game',
    owner_id: owner,
  });
  app = { id: created.application.id, botToken: created.botToken, botUserId: created.botUser.id };
  team = await json<TeamBody>(['teams', 'create', '--owner', owner!, '--name', 'Studio']);
}, 600_000);
afterAll(async () => {
  await server?.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('hearth teams (DOCS teams: Team Member Roles)', () => {
  it('create, add members with roles, change and remove them, list and show', async () => {
    expect(team).toMatchObject({
      name: 'Studio',
      owner_user_id: owner,
      members: [{ user: { id: owner }, role: 'admin', membership_state: 2, team_id: team.id }],
    });
    await json(['teams', 'add-member', '--team', team.id, '--user', admin, '--role', 'admin']);
    await json(['teams', 'add-member', '--team', team.id, '--user', developer, '--role', 'developer']);
    // The admin manages members below them.
    const added = await json<TeamBody>([
      'teams',
      'add-member',
      '--team',
      team.id,
      '--user',
      viewer,
      '--role',
      'read-only',
      '--as',
      admin,
    ]);
    expect(added.members.map((m) => [m.user.id, m.role])).toEqual([
      [owner, 'admin'],
      [admin, 'admin'],
      [developer, 'developer'],
      [viewer, 'read_only'],
    ]);
    const changed = await json<TeamBody>([
      'teams',
      'set-role',
      '--team',
      team.id,
      '--user',
      viewer,
      '--role',
      'developer',
    ]);
    expect(changed.members.find((m) => m.user.id === viewer)?.role).toBe('developer');
    await json(['teams', 'set-role', '--team', team.id, '--user', viewer, '--role', 'read_only']);
    const shown = await json<TeamBody>(['teams', 'show', '--team', team.id]);
    expect(shown.members).toHaveLength(4);
    const listed = await hearth(['teams', 'list']);
    expect(listed.stdout).toBe(`${team.id} Studio owner=${owner} members=4\n`);
    const text = await hearth(['teams', 'show', '--team', team.id]);
    expect(text.stdout).toContain(`member: ${viewer} read-only\n`);
  }, 600_000);

  it('refuses what the actor’s role does not allow, and bad roles, in one line', async () => {
    const developerTransfers = await hearth([
      'teams',
      'transfer-app',
      '--team',
      team.id,
      '--app',
      app.id,
      '--as',
      developer,
    ]);
    expect(developerTransfers).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'hearth: Missing Permissions\n',
    });
    const developerAdds = await hearth([
      'teams',
      'add-member',
      '--team',
      team.id,
      '--user',
      viewer,
      '--role',
      'read-only',
      '--as',
      developer,
    ]);
    expect(developerAdds.stderr).toBe('hearth: Missing Permissions\n');
    const adminPromotes = await hearth([
      'teams',
      'set-role',
      '--team',
      team.id,
      '--user',
      viewer,
      '--role',
      'admin',
      '--as',
      admin,
    ]);
    expect(adminPromotes.stderr).toBe('hearth: Missing Permissions\n');
    const removeOwner = await hearth(['teams', 'remove-member', '--team', team.id, '--user', owner]);
    expect(removeOwner.stderr).toBe('hearth: Invalid Form Body (user_id: Invalid value.)\n');
    const badRole = await hearth([
      'teams',
      'add-member',
      '--team',
      team.id,
      '--user',
      app.botUserId,
      '--role',
      'owner',
    ]);
    expect(badRole.stderr).toBe(
      "hearth: Invalid Form Body (role: Value must be one of ('admin', 'developer', 'read-only').)\n",
    );
    const unknown = await hearth(['teams', 'show', '--team', '123']);
    expect(unknown.stderr).toBe('hearth: Invalid Form Body (team_id: Unknown team.)\n');
  }, 600_000);

  it('transfer-app by the owner: the application answers its team and the team’s pseudo-user as owner', async () => {
    const moved = await json(['teams', 'transfer-app', '--team', team.id, '--app', app.id, '--as', owner]);
    expect(moved).toEqual({ application_id: app.id, team_id: team.id });
    // Once a team's, always a team's.
    expect((await hearth(['teams', 'transfer-app', '--team', team.id, '--app', app.id])).code).toBe(1);
    const removed = await json<TeamBody>(['teams', 'remove-member', '--team', team.id, '--user', admin]);
    expect(removed.members).toHaveLength(3);

    const body = (await (await server.api('/applications/@me', { auth: `Bot ${app.botToken}` })).json()) as {
      owner: Record<string, unknown>;
      team: TeamBody;
    };
    expect(body.owner).toMatchObject({
      id: team.id,
      username: `team${team.id}`,
      flags: TEAM_PSEUDO_USER_FLAG,
      public_flags: TEAM_PSEUDO_USER_FLAG,
    });
    expect(body.team).toMatchObject({ id: team.id, name: 'Studio', icon: null, owner_user_id: owner });
    expect(body.team.members.map((m) => m.role)).toEqual(['admin', 'developer', 'read_only']);
  }, 600_000);
});

describe('hearth quests enroll (seed: Events, QUEST_USER_ENROLLMENT)', () => {
  it('sends QUEST_USER_ENROLLMENT, signed, to a subscribed application; a second enrollment is refused', async () => {
    const game = await createGame(server, { name: 'Quest Game' });
    const { verify_key } = (await (
      await server.api('/applications/@me', { auth: `Bot ${game.botToken}` })
    ).json()) as {
      verify_key: string;
    };
    const receiver = await WebhookReceiver.listen(verify_key);
    try {
      const saved = await server.api('/applications/@me', {
        method: 'PATCH',
        auth: `Bot ${game.botToken}`,
        body: { event_webhooks_url: receiver.url, event_webhooks_types: ['QUEST_USER_ENROLLMENT'] },
      });
      expect(saved.status).toBe(200);
      const enrolled = await json([
        'quests',
        'enroll',
        '--app',
        game.id,
        '--user',
        viewer,
        '--quest',
        '1234567890',
      ]);
      expect(enrolled).toEqual({
        application_id: game.id,
        quest_id: '1234567890',
        user_id: viewer,
        enrolled_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      const [delivery] = await receiver.untilEvents('QUEST_USER_ENROLLMENT');
      expect(delivery?.verified).toBe(true);
      expect(delivery?.body).toMatchObject({ version: 1, application_id: game.id, type: 1 });
      expect(delivery?.body.event?.data).toEqual({
        quest_id: '1234567890',
        user_id: viewer,
        user: expect.objectContaining({ id: viewer, username: 'viewer1' }),
        enrolled_at: enrolled['enrolled_at'],
      });
      const again = await hearth([
        'quests',
        'enroll',
        '--app',
        game.id,
        '--user',
        viewer,
        '--quest',
        '1234567890',
      ]);
      expect(again.stderr).toBe('hearth: Invalid Form Body (user_id: Invalid value.)\n');
      const bad = await hearth(['quests', 'enroll', '--app', game.id, '--user', viewer, '--quest', 'q1']);
      expect(bad.stderr).toBe('hearth: Invalid Form Body (quest_id: Value "q1" is not snowflake.)\n');
    } finally {
      await receiver.close();
    }
  }, 600_000);
});
