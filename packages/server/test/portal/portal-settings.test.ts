import { FormErrors, JSONErrors } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer } from '../../../../test-support/oauth.js';
import { type PortalAnswer, PortalClient } from './portal-client.js';

/**
 * Issue 22, the portal's installation, icon, team, teams and Activity pages: plain form posts with the
 * session cookie and form token, each saved through the API's own services and refused in the API's words.
 */

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

interface Person {
  client: PortalClient;
  csrf: string;
  id: string;
  username: string;
}

let hearth: TestHearth;
let owner: Person;
let admin: Person;
let developer: Person;
let reader: Person;
let stranger: Person;
let appId: string;
let botToken: string;

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
};

/** The error messages a page shows, as text, each as `field: message` (or the message alone). */
function errorsOn(page: PortalAnswer): string[] {
  const list = /<ul role="alert" id="errors">([\s\S]*?)<\/ul>/.exec(page.html)?.[1] ?? '';
  return [...list.matchAll(/<li data-field="([^"]*)">(?:<strong>[^<]*<\/strong>: )?([^<]*)<\/li>/g)].map(
    ([, field, message]) => {
      const text = (message ?? '').replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e);
      return field ? `${field}: ${text}` : text;
    },
  );
}

async function person(name: string): Promise<Person> {
  const { user } = await createPlayer(hearth, name);
  const client = new PortalClient(hearth);
  const csrf = await client.signIn(user.email ?? '');
  return { client, csrf, id: user.id, username: user.username };
}

/** The application as the API serves it to its bot. */
async function applicationObject(): Promise<Record<string, unknown>> {
  const response = await hearth.api('/applications/@me', { auth: `Bot ${botToken}` });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

/** The role each member has on the team page. */
function rolesOn(page: PortalAnswer): Record<string, string> {
  return Object.fromEntries(
    [...page.html.matchAll(/<tr data-member="(\d+)"><td>[\s\S]*?<\/td><td data-role>([^<]*)<\/td>/g)].map(
      ([, id, role]) => [id ?? '', role ?? ''],
    ),
  );
}

beforeAll(async () => {
  hearth = await startHearth();
  owner = await person('setowner');
  admin = await person('setadmin');
  developer = await person('setdev');
  reader = await person('setreader');
  stranger = await person('setstranger');
  const created = await owner.client.post('/developers/applications', {
    csrf: owner.csrf,
    name: 'Hearthlight',
  });
  appId = /\/developers\/applications\/(\d+)$/.exec(created.location ?? '')?.[1] ?? '';
  const reset = await owner.client.post(`/developers/applications/${appId}/bot/reset-token`, {
    csrf: owner.csrf,
  });
  botToken = /<code id="bot-token">([^<]+)<\/code>/.exec(reset.html)?.[1] ?? '';
  expect(botToken).not.toBe('');
});
afterAll(() => hearth.close());

describe('installation settings (integration_types_config, install_params, custom_install_url)', () => {
  const path = () => `/developers/applications/${appId}/installation`;

  it('saves both install types with their default install links, as the API then serves them', async () => {
    const saved = await owner.client.post(path(), {
      csrf: owner.csrf,
      guild_install: 'true',
      guild_scopes: ['bot', 'applications.commands'],
      guild_permissions: '2048',
      user_install: 'true',
      user_scopes: ['applications.commands'],
      user_permissions: '',
      custom_install_url: '',
    });
    expect(saved.status, saved.html.slice(0, 300)).toBe(303);
    const object = await applicationObject();
    expect(object['integration_types_config']).toEqual({
      '0': { oauth2_install_params: { scopes: ['bot', 'applications.commands'], permissions: '2048' } },
      '1': { oauth2_install_params: { scopes: ['applications.commands'], permissions: '0' } },
    });
    expect(object['install_params']).toEqual({
      scopes: ['bot', 'applications.commands'],
      permissions: '2048',
    });
    const page = await owner.client.get(path());
    expect(page.html).toMatch(
      /id="guild-permissions" name="guild_permissions" type="text" inputmode="numeric" value="2048"/,
    );
    expect(page.html).toMatch(/name="user_scopes" value="applications.commands" checked/);
    expect(page.html).not.toMatch(/name="user_scopes" value="bot" checked/);
  });

  it("refuses the bot scope for user installs in the API's words, keeping what was typed", async () => {
    const refused = await owner.client.post(path(), {
      csrf: owner.csrf,
      guild_install: 'true',
      user_install: 'true',
      user_scopes: ['bot'],
      user_permissions: '8',
    });
    expect(refused.status).toBe(400);
    expect(errorsOn(refused)).toEqual([
      `integration_types_config.1.oauth2_install_params.scopes.0: ${FormErrors.botScopeGuildInstallOnly().message}`,
    ]);
    expect(refused.html).toMatch(/name="user_scopes" value="bot" checked/);
    // Nothing was written.
    expect((await applicationObject())['integration_types_config']).toHaveProperty(
      '1.oauth2_install_params.scopes',
      ['applications.commands'],
    );
  });

  it('takes a custom install URL only without default install links, as the API does', async () => {
    const both = await owner.client.post(path(), {
      csrf: owner.csrf,
      guild_install: 'true',
      guild_scopes: 'bot',
      custom_install_url: 'https://game.example/install',
    });
    expect(both.status).toBe(400);
    expect(errorsOn(both)).toEqual([`custom_install_url: ${FormErrors.installParamsExclusive().message}`]);
    const custom = await owner.client.post(path(), {
      csrf: owner.csrf,
      guild_install: 'true',
      custom_install_url: 'https://game.example/install',
    });
    expect(custom.status).toBe(303);
    const object = await applicationObject();
    expect(object['custom_install_url']).toBe('https://game.example/install');
    expect(object['integration_types_config']).toEqual({ '0': {} });
  });
});

describe('general information: icon upload', () => {
  it('stores an uploaded image as the API stores application icons and shows it back', async () => {
    const answer = await owner.client.postMultipart(
      `/developers/applications/${appId}/icon`,
      { csrf: owner.csrf },
      { bytes: PNG, type: 'image/png', name: 'icon.png' },
    );
    expect(answer.status, answer.html.slice(0, 300)).toBe(303);
    const icon = (await applicationObject())['icon'];
    expect(typeof icon).toBe('string');
    const page = await owner.client.get(`/developers/applications/${appId}`);
    expect(page.html).toContain(`src="/app-icons/${appId}/${String(icon)}.png"`);
    const served = await fetch(`${hearth.url}/app-icons/${appId}/${String(icon)}.png`);
    expect(Buffer.from(await served.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it("refuses a file that is not an image, in the API's words", async () => {
    const answer = await owner.client.postMultipart(
      `/developers/applications/${appId}/icon`,
      { csrf: owner.csrf },
      { bytes: Buffer.from('not an image'), type: 'image/png', name: 'icon.png' },
    );
    expect(answer.status).toBe(400);
    expect(errorsOn(answer)).toEqual([`icon: ${FormErrors.imageInvalid().message}`]);
  });

  it('refuses an upload without the form token', async () => {
    const answer = await owner.client.postMultipart(
      `/developers/applications/${appId}/icon`,
      {},
      { bytes: PNG, type: 'image/png', name: 'icon.png' },
    );
    expect(answer.status).toBe(403);
  });

  it('saves tags, refusing too many in the API’s words', async () => {
    const tags = 'rpg, co-op, fantasy, crafting, survival, pixel';
    const refused = await owner.client.post(`/developers/applications/${appId}/general`, {
      csrf: owner.csrf,
      description: 'A warm game',
      tags,
    });
    expect(refused.status).toBe(400);
    expect(errorsOn(refused)).toEqual([`tags: ${FormErrors.maxItems(5).message}`]);
  });
});

describe('teams and member roles', () => {
  let teamId: string;
  const members = (path = '') => `/developers/teams/${teamId}/members${path}`;

  it('creates a team owned by its creator and lists it', async () => {
    const empty = await owner.client.post('/developers/teams', { csrf: owner.csrf, name: '' });
    expect(empty.status).toBe(400);
    expect(errorsOn(empty)).toEqual([`name: ${FormErrors.badLength(1, 100).message}`]);
    const created = await owner.client.post('/developers/teams', { csrf: owner.csrf, name: 'Ember Studio' });
    expect(created.status).toBe(303);
    teamId = /\/developers\/teams\/(\d+)$/.exec(created.location ?? '')?.[1] ?? '';
    const list = await owner.client.get('/developers/teams');
    expect(list.html).toMatch(
      new RegExp(`href="/developers/teams/${teamId}">Ember Studio</a> <span data-role>owner`),
    );
    expect(rolesOn(await owner.client.get(`/developers/teams/${teamId}`))).toEqual({ [owner.id]: 'owner' });
  });

  it('lets the owner add members by username or id with each role below owner', async () => {
    for (const [who, role] of [
      [admin, 'admin'],
      [developer, 'developer'],
    ] as const) {
      const added = await owner.client.post(members(), { csrf: owner.csrf, user: who.username, role });
      expect(added.status, added.html.slice(0, 300)).toBe(303);
    }
    const byId = await owner.client.post(members(), { csrf: owner.csrf, user: reader.id, role: 'read-only' });
    expect(byId.status).toBe(303);
    const owned = await owner.client.post(members(), { csrf: owner.csrf, user: stranger.id, role: 'owner' });
    expect(owned.status).toBe(400);
    expect(errorsOn(owned)).toEqual([
      `role: ${FormErrors.choices(['admin', 'developer', 'read-only']).message}`,
    ]);
    expect(rolesOn(await owner.client.get(`/developers/teams/${teamId}`))).toEqual({
      [owner.id]: 'owner',
      [admin.id]: 'admin',
      [developer.id]: 'developer',
      [reader.id]: 'read-only',
    });
  });

  it('hides the team from a non-member (404)', async () => {
    const hidden = await stranger.client.get(`/developers/teams/${teamId}`);
    expect(hidden.status).toBe(404);
    expect(hidden.html).toContain('There is no such team among yours.');
    expect(hidden.html).not.toContain('Ember Studio');
    const post = await stranger.client.post(members(), {
      csrf: stranger.csrf,
      user: stranger.id,
      role: 'admin',
    });
    expect(post.status).toBe(404);
  });

  it('lets an admin manage developers and read-only members, not admins or the owner', async () => {
    const promote = await admin.client.post(members('/role'), {
      csrf: admin.csrf,
      user_id: reader.id,
      role: 'developer',
    });
    expect(promote.status).toBe(303);
    const toAdmin = await admin.client.post(members('/role'), {
      csrf: admin.csrf,
      user_id: reader.id,
      role: 'admin',
    });
    expect(toAdmin.status).toBe(403);
    expect(errorsOn(toAdmin)).toEqual([JSONErrors.MissingPermissions.message]);
    const removeOwner = await admin.client.post(members('/remove'), { csrf: admin.csrf, user_id: owner.id });
    expect(removeOwner.status).toBe(400);
    const back = await admin.client.post(members('/role'), {
      csrf: admin.csrf,
      user_id: reader.id,
      role: 'read-only',
    });
    expect(back.status).toBe(303);
  });

  it('refuses member changes to developers and read-only members, showing them no forms', async () => {
    for (const who of [developer, reader]) {
      const page = await who.client.get(`/developers/teams/${teamId}`);
      expect(page.html).toContain('id="read-only-note"');
      expect(page.html).not.toContain('id="add-member"');
      const add = await who.client.post(members(), { csrf: who.csrf, user: stranger.id, role: 'read-only' });
      expect(add.status).toBe(403);
      expect(errorsOn(add)).toEqual([JSONErrors.MissingPermissions.message]);
    }
    const remove = await developer.client.post(members('/remove'), {
      csrf: developer.csrf,
      user_id: reader.id,
    });
    expect(remove.status).toBe(403);
    expect(Object.keys(rolesOn(await owner.client.get(`/developers/teams/${teamId}`)))).toContain(reader.id);
  });

  it('moves the owner’s application into the team; then read-only members see it and may not change it', async () => {
    const page = await owner.client.get(`/developers/applications/${appId}`);
    expect(page.html).toContain(`<option value="${teamId}">Ember Studio</option>`);
    expect((await reader.client.get(`/developers/applications/${appId}`)).status).toBe(404);
    const moved = await owner.client.post(`/developers/applications/${appId}/team`, {
      csrf: owner.csrf,
      team_id: teamId,
    });
    expect(moved.status).toBe(303);
    expect(((await applicationObject())['team'] as { id: string }).id).toBe(teamId);
    const seen = await reader.client.get(`/developers/applications/${appId}`);
    expect(seen.status).toBe(200);
    expect(seen.html).toContain(`id="app-team" href="/developers/teams/${teamId}"`);
    const change = await reader.client.post(`/developers/applications/${appId}/activities/mappings`, {
      csrf: reader.csrf,
      prefix: '/',
      target: 'game.example',
    });
    expect(change.status).toBe(403);
  });

  it('removes a member, who then no longer sees the team', async () => {
    const removed = await admin.client.post(members('/remove'), { csrf: admin.csrf, user_id: reader.id });
    expect(removed.status).toBe(303);
    expect((await reader.client.get(`/developers/teams/${teamId}`)).status).toBe(404);
  });
});

describe('Activity URL mappings', () => {
  const path = (rest = '') => `/developers/applications/${appId}/activities${rest}`;

  it('adds, replaces and removes mappings that the Activity proxy then follows', async () => {
    // A developer of the team that now owns the application configures it.
    const { client, csrf } = developer;
    expect(
      (await client.post(path('/mappings'), { csrf, prefix: '/api', target: 'api.game.example/v1' })).status,
    ).toBe(303);
    expect((await client.post(path('/mappings'), { csrf, prefix: '/', target: 'game.example' })).status).toBe(
      303,
    );
    expect(
      (await client.post(path('/mappings'), { csrf, prefix: '/api', target: 'api.game.example/v2' })).status,
    ).toBe(303);
    const page = await client.get(path());
    const rows = [
      ...page.html.matchAll(/<tr data-prefix="([^"]*)"><td><code>[^<]*<\/code><\/td><td><code>([^<]*)</g),
    ].map(([, prefix, target]) => `${prefix} → ${target}`);
    expect(rows.sort()).toEqual(['/ → https://game.example', '/api → https://api.game.example/v2']);
    expect((await client.post(path('/mappings/remove'), { csrf, prefix: '/api' })).status).toBe(303);
    expect((await client.get(path())).html).not.toContain('data-prefix="/api"');
  });

  it("refuses a reserved prefix and a missing target in the API's words", async () => {
    const { client, csrf } = developer;
    const proxy = await client.post(path('/mappings'), { csrf, prefix: '/.proxy', target: 'game.example' });
    expect(proxy.status).toBe(400);
    expect(errorsOn(proxy)).toEqual([`prefix: ${FormErrors.invalid().message}`]);
    expect(proxy.html).toContain('value="/.proxy"');
    const missing = await client.post(path('/mappings'), { csrf, prefix: '/x', target: '' });
    expect(errorsOn(missing)).toEqual([`target: ${FormErrors.required().message}`]);
    const gone = await client.post(path('/mappings/remove'), { csrf, prefix: '/nothing' });
    expect(gone.status).toBe(400);
  });
});
