import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer } from '../../../../test-support/oauth.js';
import { PortalClient } from '../portal/portal-client.js';

let hearth: TestHearth;
beforeAll(async () => {
  hearth = await startHearth();
});
afterAll(() => hearth.close());

describe('the developer portal and team roles (DOCS teams: Team Member Roles)', () => {
  it('team members open the team’s application; a developer may change it, a read-only member only view it', async () => {
    const [owner, dev, viewer, stranger] = await Promise.all(
      ['ptowner', 'ptdev', 'ptviewer', 'ptstranger'].map((name) => createPlayer(hearth, name)),
    );
    // Fixtures through the services the CLI calls (hearth teams …, tested in teams-quests-cli.test.ts).
    const { teams, applications } = hearth.services;
    const team = await teams.create({ name: 'Portal Team', ownerId: owner!.user.id });
    await teams.addMember({ teamId: team.id, userId: dev!.user.id, role: 'developer' });
    await teams.addMember({ teamId: team.id, userId: viewer!.user.id, role: 'read-only' });
    const app = await applications.createApplication({ name: 'Team App', owner_id: owner!.user.id });
    await teams.transferApplication({
      teamId: team.id,
      applicationId: app.application.id,
      actorId: owner!.user.id,
    });
    const path = `/developers/applications/${app.application.id}`;

    const viewerPortal = new PortalClient(hearth);
    const viewerCsrf = await viewerPortal.signIn(viewer!.user.email ?? '');
    expect((await viewerPortal.get('/developers')).html).toContain(path);
    expect((await viewerPortal.get(path)).status).toBe(200);
    const refused = await viewerPortal.post(`${path}/general`, {
      csrf: viewerCsrf,
      description: 'x',
      tags: '',
    });
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('lets you view it, not change it');
    expect((await applications.requireApplication(app.application.id)).description).toBe('');

    const devPortal = new PortalClient(hearth);
    const devCsrf = await devPortal.signIn(dev!.user.email ?? '');
    const saved = await devPortal.post(`${path}/general`, {
      csrf: devCsrf,
      description: 'by the developer',
      tags: '',
    });
    expect(saved.status).toBe(303);
    expect((await applications.requireApplication(app.application.id)).description).toBe('by the developer');

    const strangerPortal = new PortalClient(hearth);
    await strangerPortal.signIn(stranger!.user.email ?? '');
    expect((await strangerPortal.get(path)).status).toBe(404);
  });
});
