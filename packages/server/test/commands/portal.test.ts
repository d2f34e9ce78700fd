import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer } from '../../../../test-support/oauth.js';
import { call } from '../guilds/moderation-support.js';
import { PortalClient } from '../portal/portal-client.js';

/** The developer portal's Commands section: the application's global commands, read-only, to its owner. */

let hearth: TestHearth;

beforeAll(async () => {
  hearth = await startHearth();
});
afterAll(() => hearth.close());

describe('developer portal, Commands', () => {
  it("lists the owner's global commands with their type, and shows nothing to another user", async () => {
    const owner = await createPlayer(hearth, 'cmdowner');
    const stranger = await createPlayer(hearth, 'cmdstranger');
    const created = await hearth.services.applications.createApplication({
      name: 'Command Forge',
      owner_id: owner.user.id,
    });
    const id = created.application.id;
    const portal = new PortalClient(hearth);
    await portal.signIn(owner.user.email ?? '');
    const empty = await portal.get(`/developers/applications/${id}/commands`);
    expect(empty.status).toBe(200);
    expect(empty.html).toContain('No global commands yet.');

    const bot = `Bot ${created.botToken}`;
    await call(hearth, bot, 'POST', `/applications/${id}/commands`, {
      name: 'forge',
      description: 'Forges <b>',
    });
    await call(hearth, bot, 'POST', `/applications/${id}/commands`, { name: 'Inspect', type: 2 });
    const page = await portal.get(`/developers/applications/${id}/commands`);
    expect(page.html).toContain(
      '<td><code>forge</code></td><td>Slash command</td><td>Forges &#60;b&#62;</td>',
    );
    expect(page.html).toContain('<td><code>Inspect</code></td><td>User context menu</td>');
    expect(page.html).toContain('aria-current="page">Commands</a>');

    const other = new PortalClient(hearth);
    await other.signIn(stranger.user.email ?? '');
    const refused = await other.get(`/developers/applications/${id}/commands`);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.html).not.toContain('forge');
  });
});
