import { ACCESS_TOKEN_TTL_SECONDS, ApplicationFlags, FormErrors, PremiumTypes } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import {
  consent,
  consentLocation,
  createGame,
  createPlayer,
  grantTokens,
  type TestGame,
  tokenRequest,
} from '../../../test-support/oauth.js';
import { requiredKeys } from '../../../test-support/openapi.js';

let hearth: TestHearth;
let player: { id: string; token: string };

beforeAll(async () => {
  hearth = await startHearth();
  const { user, token } = await createPlayer(hearth);
  player = { id: user.id, token };
});
afterAll(() => hearth.close());

interface ApplicationBody {
  id: string;
  flags: number;
  flags_new: string;
  description: string;
  tags: string[];
  eligible_oauth2_scopes: string[];
  approximate_user_authorization_count: number;
  approximate_user_install_count: number;
  bot: { id: string };
  [key: string]: unknown;
}

async function expectError(response: Response, status: number, body: unknown): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await response.json()).toEqual(body);
}

async function current(game: TestGame, path = '/applications/@me'): Promise<ApplicationBody> {
  const response = await hearth.api(path, { auth: `Bot ${game.botToken}` });
  expect(response.status).toBe(200);
  return (await response.json()) as ApplicationBody;
}

const patchCurrent = (game: TestGame, body: unknown) =>
  hearth.api('/applications/@me', { method: 'PATCH', auth: `Bot ${game.botToken}`, body });

const invalidForm = (errors: unknown) => ({ code: 50035, message: 'Invalid Form Body', errors });

const INTENT_LIMITED: Array<[string, number]> = [
  ['GatewayPresenceLimited', 1 << 13],
  ['GatewayGuildMembersLimited', 1 << 15],
  ['GatewayMessageContentLimited', 1 << 19],
];

describe('GET /applications/@me and /oauth2/applications/@me (SPEC PrivateApplicationResponse)', () => {
  it.each(['/applications/@me', '/oauth2/applications/@me'])(
    '%s answers the bot token’s application with every key SPEC marks required',
    async (path) => {
      const game = await createGame(hearth);
      const body = await current(game, path);
      const required = requiredKeys('PrivateApplicationResponse');
      expect(required.length).toBeGreaterThan(10);
      expect(required.filter((key) => !(key in body))).toEqual([]);
      expect(body).toMatchObject({
        id: game.id,
        bot: { id: game.botUserId, bot: true },
        flags: 0,
        flags_new: '0',
        redirect_uris: ['http://127.0.0.1/callback'],
        approximate_user_authorization_count: 0,
      });
    },
  );

  it('owner is the developer who owns the application, not its bot; bot and owner carry flags and public_flags', async () => {
    const developer = await createPlayer(hearth, 'studio.owner');
    const created = await hearth.services.applications.createApplication({
      name: 'Owned Game',
      owner_id: developer.user.id,
    });
    const response = await hearth.api('/applications/@me', { auth: `Bot ${created.botToken}` });
    const body = (await response.json()) as ApplicationBody;
    const common = {
      global_name: null,
      avatar: null,
      public_flags: 0,
      flags: 0,
      banner: null,
      accent_color: null,
      avatar_decoration_data: null,
      collectibles: null,
      primary_guild: null,
    };
    expect(body['owner']).toEqual({
      id: developer.user.id,
      username: 'studio.owner',
      discriminator: '0',
      ...common,
    });
    expect(body.bot).toEqual({
      id: created.botUser.id,
      username: 'Owned Game',
      discriminator: created.botUser.discriminator,
      bot: true,
      ...common,
    });
  });

  it('an application made without an owner gets a developer account of its own as owner, never the bot', async () => {
    const game = await createGame(hearth);
    const body = await current(game);
    expect(body['owner']).toMatchObject({ id: game.ownerId, public_flags: 0, flags: 0 });
    expect(game.ownerId).not.toBe(game.botUserId);
    expect((body['owner'] as Record<string, unknown>)['bot']).toBeUndefined();
  });

  it('serves the same object on both paths', async () => {
    const game = await createGame(hearth);
    expect(await current(game, '/oauth2/applications/@me')).toEqual(await current(game, '/applications/@me'));
  });

  it('flags is the low 32 bits and flags_new every bit as a decimal string (seed: Records, Application)', async () => {
    const game = await createGame(hearth);
    const before = await current(game);
    expect(before.eligible_oauth2_scopes).toContain('identify');
    expect(before.eligible_oauth2_scopes).not.toContain('identify.premium');

    await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['IdentifyPremiumApproved'] });

    const after = await current(game);
    expect(after.flags).toBe(0);
    expect(after.flags_new).toBe(String(1n << 48n));
    expect(after.eligible_oauth2_scopes).toContain('identify.premium');
  });

  it.each([
    ['GET', '/applications/@me'],
    ['GET', '/oauth2/applications/@me'],
    ['PATCH', '/applications/@me'],
  ])('%s %s refuses a user session token with 403 code 20002', async (method, path) => {
    const body = method === 'PATCH' ? { description: 'not mine' } : undefined;
    await expectError(await hearth.api(path, { method, auth: player.token, body }), 403, {
      code: 20002,
      message: 'Only bots can use this endpoint',
    });
  });
});

describe('PATCH /applications/@me (SPEC ApplicationFormPartial)', () => {
  it('updates description and tags, and GET shows them', async () => {
    const game = await createGame(hearth);
    const response = await patchCurrent(game, { description: 'A cosy crafting game', tags: ['cozy', 'rpg'] });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      description: 'A cosy crafting game',
      tags: ['cozy', 'rpg'],
    });
    expect(await current(game)).toMatchObject({ description: 'A cosy crafting game', tags: ['cozy', 'rpg'] });
  });

  it('accepts a description of exactly 400 characters and five tags of 20', async () => {
    const game = await createGame(hearth);
    const tags = ['a', 'b', 'c', 'd', 'e'].map((c) => c.repeat(20));
    const response = await patchCurrent(game, { description: 'd'.repeat(400), tags });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ description: 'd'.repeat(400), tags });
  });

  it.each<[string, number]>([
    ...INTENT_LIMITED,
    ['all three limited intents', (1 << 13) | (1 << 15) | (1 << 19)],
  ])('accepts the self-service flag %s', async (_, flags) => {
    const game = await createGame(hearth);
    const response = await patchCurrent(game, { flags });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ flags, flags_new: String(flags) });
    expect(await current(game)).toMatchObject({ flags, flags_new: String(flags) });
  });

  it('keeps operator-granted approval bits when the flags are replaced', async () => {
    const game = await createGame(hearth);
    await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['IdentifyPremiumApproved'] });
    const response = await patchCurrent(game, { flags: 1 << 13 });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      flags: 1 << 13,
      flags_new: String(ApplicationFlags.IdentifyPremiumApproved | (1n << 13n)),
    });
    const cleared = await patchCurrent(game, { flags: 0 });
    expect(await cleared.json()).toMatchObject({ flags: 0, flags_new: String(1n << 48n) });
  });

  it.each([
    ['GatewayPresence (1 << 12)', 1 << 12],
    ['GatewayGuildMembers (1 << 14)', 1 << 14],
    ['GatewayMessageContent (1 << 18)', 1 << 18],
    ['Embedded (1 << 17)', 1 << 17],
    ['bit 0', 1],
    ['bit 31', 2 ** 31],
    ['a limited intent with a privileged one', (1 << 13) | (1 << 12)],
  ])('refuses flag %s with 50035 and errors.flags, changing nothing', async (_, flags) => {
    const game = await createGame(hearth);
    await expectError(
      await patchCurrent(game, { flags }),
      400,
      invalidForm({ flags: { _errors: [FormErrors.invalid()] } }),
    );
    expect(await current(game)).toMatchObject({ flags: 0, flags_new: '0' });
  });

  it('refuses flags beyond 32 bits with 50035 and errors.flags', async () => {
    const game = await createGame(hearth);
    await expectError(
      await patchCurrent(game, { flags: 2 ** 32 }),
      400,
      invalidForm({ flags: { _errors: [FormErrors.maximum(4294967295)] } }),
    );
  });

  it('refuses a description of 401 characters with errors.description BASE_TYPE_MAX_LENGTH', async () => {
    const game = await createGame(hearth);
    await expectError(
      await patchCurrent(game, { description: 'd'.repeat(401) }),
      400,
      invalidForm({ description: { _errors: [FormErrors.maxLength(400)] } }),
    );
    expect((await current(game)).description).toBe('');
  });

  it('refuses six tags with errors.tags BASE_TYPE_MAX_LENGTH', async () => {
    const game = await createGame(hearth);
    await expectError(
      await patchCurrent(game, { tags: ['a', 'b', 'c', 'd', 'e', 'f'] }),
      400,
      invalidForm({ tags: { _errors: [FormErrors.maxItems(5)] } }),
    );
    expect((await current(game)).tags).toEqual([]);
  });

  it('refuses a repeated tag (SPEC: tags are unique items)', async () => {
    const game = await createGame(hearth);
    await expectError(
      await patchCurrent(game, { tags: ['cozy', 'cozy'] }),
      400,
      invalidForm({ tags: { _errors: [FormErrors.invalid()] } }),
    );
  });

  it('refuses a tag of 21 characters with errors.tags.<index> BASE_TYPE_BAD_LENGTH', async () => {
    const game = await createGame(hearth);
    await expectError(
      await patchCurrent(game, { tags: ['ok', 't'.repeat(21)] }),
      400,
      invalidForm({ tags: { '1': { _errors: [FormErrors.badLength(1, 20)] } } }),
    );
  });
});

describe('approximate_user_authorization_count (SPEC PrivateApplicationResponse)', () => {
  it('counts each player who consented once, not refusals, and drops a player whose link is revoked', async () => {
    const game = await createGame(hearth);
    const params = {
      client_id: game.id,
      response_type: 'code',
      scope: 'identify',
      redirect_uri: 'http://127.0.0.1/callback',
    };
    const [a, b, c, d] = await Promise.all([1, 2, 3, 4].map(() => createPlayer(hearth)));
    expect((await current(game)).approximate_user_authorization_count).toBe(0);

    expect((await consent(hearth, a!.token, params)).status).toBe(200);
    expect((await consent(hearth, b!.token, params)).status).toBe(200);
    expect((await consent(hearth, b!.token, params)).status).toBe(200);
    const refused = await consentLocation(hearth, c!.token, params, false);
    expect(refused.searchParams.get('error')).toBe('access_denied');
    expect(await current(game)).toMatchObject({
      approximate_user_authorization_count: 2,
      approximate_user_install_count: 0,
    });
    // A user install (integration_type 1) counts in both figures.
    expect((await consent(hearth, c!.token, { ...params, integration_type: '1' })).status).toBe(200);
    expect(await current(game)).toMatchObject({
      approximate_user_authorization_count: 3,
      approximate_user_install_count: 1,
    });

    const tokens = await grantTokens(hearth, game, d!.token);
    expect((await current(game)).approximate_user_authorization_count).toBe(4);
    const revoked = await tokenRequest(
      hearth,
      { token: tokens.access_token, client_id: game.id, client_secret: game.clientSecret },
      { path: '/oauth2/token/revoke' },
    );
    expect(revoked.status).toBe(200);
    expect((await current(game)).approximate_user_authorization_count).toBe(3);
  });
});

describe('premium_type (seed: Records, User; Authentication 2)', () => {
  let subscriber: { id: string; token: string };

  beforeAll(async () => {
    const { user, token } = await createPlayer(hearth);
    subscriber = { id: user.id, token };
    await hearth.services.accounts.setPremiumType(user.id, PremiumTypes.Nitro);
  });

  const premiumTypeWith = async (auth: string) => {
    const response = await hearth.api('/users/@me', { auth });
    expect(response.status).toBe(200);
    return ((await response.json()) as { premium_type: number }).premium_type;
  };

  it("shows the player's own session the real premium_type", async () => {
    expect(await premiumTypeWith(subscriber.token)).toBe(2);
  });

  it('reads 0 through a bearer token with only `identify`', async () => {
    const game = await createGame(hearth);
    const tokens = await grantTokens(hearth, game, subscriber.token, 'identify');
    expect(await premiumTypeWith(`Bearer ${tokens.access_token}`)).toBe(0);
  });

  it('refuses `identify.premium` for an unapproved application by redirecting with error=invalid_scope', async () => {
    const game = await createGame(hearth);
    const query = new URLSearchParams({
      client_id: game.id,
      response_type: 'code',
      scope: 'identify identify.premium',
      redirect_uri: 'http://127.0.0.1/callback',
      state: 'premium-state',
    });
    const response = await fetch(`${hearth.url}/oauth2/authorize?${query}`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('http://127.0.0.1/callback');
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'invalid_scope',
      error_description: 'Scope identify.premium needs approval',
      state: 'premium-state',
    });

    const answered = await consentLocation(hearth, subscriber.token, Object.fromEntries(query));
    expect(answered.searchParams.get('error')).toBe('invalid_scope');
    expect(answered.searchParams.get('code')).toBeNull();
  });

  it('reads the real premium_type once the application is approved and the token has `identify.premium`', async () => {
    const game = await createGame(hearth);
    await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['IdentifyPremiumApproved'] });
    const tokens = await grantTokens(hearth, game, subscriber.token, 'identify identify.premium');
    expect(tokens.scope).toBe('identify identify.premium');
    expect(await premiumTypeWith(`Bearer ${tokens.access_token}`)).toBe(2);

    const identifyOnly = await grantTokens(hearth, game, subscriber.token, 'identify');
    expect(await premiumTypeWith(`Bearer ${identifyOnly.access_token}`)).toBe(0);
  });

  it('reads 0 through an `identify.premium` token once the approval is revoked', async () => {
    const game = await createGame(hearth);
    await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['IdentifyPremiumApproved'] });
    const tokens = await grantTokens(hearth, game, subscriber.token, 'identify identify.premium');
    expect(await premiumTypeWith(`Bearer ${tokens.access_token}`)).toBe(2);
    await hearth.services.applications.adminUpdate(game.id, { revoke_flags: ['IdentifyPremiumApproved'] });
    expect(await premiumTypeWith(`Bearer ${tokens.access_token}`)).toBe(0);
  });
});

describe('relationships.read for Activities (seed, Authentication 2: once the Social SDK terms are accepted)', () => {
  /** An Activity: an application with the Embedded flag, as an operator sets it. */
  async function createActivity(): Promise<TestGame> {
    const game = await createGame(hearth);
    await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['Embedded'] });
    return game;
  }

  async function authorizeError(game: TestGame, scope: string): Promise<Record<string, string>> {
    const query = new URLSearchParams({
      client_id: game.id,
      response_type: 'code',
      scope,
      redirect_uri: 'http://127.0.0.1/callback',
      state: 'terms-state',
    });
    const response = await fetch(`${hearth.url}/oauth2/authorize?${query}`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    return Object.fromEntries(new URL(response.headers.get('location')!).searchParams);
  }

  const relationships = (bearer: string) => hearth.api('/users/@me/relationships', { auth: bearer });
  const eligible = async (game: TestGame) =>
    (
      (await (
        await hearth.api('/applications/@me', { auth: `Bot ${game.botToken}` })
      ).json()) as ApplicationBody
    ).eligible_oauth2_scopes;

  it('an Activity is refused relationships.read with invalid_scope before the terms, and granted after', async () => {
    const activity = await createActivity();
    expect(await authorizeError(activity, 'identify relationships.read')).toEqual({
      error: 'invalid_scope',
      error_description: 'Scope relationships.read needs approval',
      state: 'terms-state',
    });
    expect(await eligible(activity)).not.toContain('relationships.read');

    await hearth.services.applications.adminUpdate(activity.id, { grant_flags: ['SocialSdkTermsAccepted'] });
    expect(await eligible(activity)).toContain('relationships.read');
    const tokens = await grantTokens(hearth, activity, player.token, 'identify relationships.read');
    expect(tokens.scope).toBe('identify relationships.read');
    const answer = await relationships(`Bearer ${tokens.access_token}`);
    expect([answer.status, await answer.json()]).toEqual([200, []]);
  });

  it('through sdk.social_layer an Activity reads relationships only while the terms stand accepted', async () => {
    const activity = await createActivity();
    const tokens = await grantTokens(hearth, activity, player.token, 'openid sdk.social_layer');
    const refused = await relationships(`Bearer ${tokens.access_token}`);
    expect([refused.status, await refused.json()]).toEqual([
      403,
      { code: 50026, message: 'Missing required OAuth2 scope' },
    ]);

    await hearth.services.applications.adminUpdate(activity.id, { grant_flags: ['SocialSdkTermsAccepted'] });
    expect((await relationships(`Bearer ${tokens.access_token}`)).status).toBe(200);
    await hearth.services.applications.adminUpdate(activity.id, { revoke_flags: ['SocialSdkTermsAccepted'] });
    expect((await relationships(`Bearer ${tokens.access_token}`)).status).toBe(403);
  });

  it('an application that is not an Activity needs no terms for relationships.read', async () => {
    const game = await createGame(hearth);
    expect(await eligible(game)).toContain('relationships.read');
    const tokens = await grantTokens(hearth, game, player.token, 'identify relationships.read');
    expect((await relationships(`Bearer ${tokens.access_token}`)).status).toBe(200);
  });
});

describe('publisher-level linking: POST /partner-sdk/child-token (PROTOCOL.md §B.3)', () => {
  const clock = new ManualClock('2026-01-15T12:00:00Z');
  let linked: TestHearth;
  let parent: TestGame;
  let child: TestGame;
  let unapproved: TestGame;
  let childOfUnapproved: TestGame;
  let gamer: { id: string; token: string };

  beforeAll(async () => {
    // The clock stands still, so rate-limit windows never roll over: a budget large enough for the block.
    linked = await startHearth({ rateLimitGlobal: 10_000 }, clock);
    parent = await createGame(linked);
    child = await createGame(linked);
    unapproved = await createGame(linked);
    childOfUnapproved = await createGame(linked);
    const admin = linked.services.applications;
    await admin.adminUpdate(parent.id, { grant_flags: ['PublisherLinkingApproved'] });
    await admin.adminUpdate(child.id, { parent_application_id: parent.id });
    await admin.adminUpdate(childOfUnapproved.id, { parent_application_id: unapproved.id });
    const { user, token } = await createPlayer(linked);
    gamer = { id: user.id, token };
  });
  afterAll(() => linked.close());

  const exchange = (body: Record<string, string>) =>
    linked.api('/partner-sdk/child-token', { method: 'POST', body });

  const parentTokens = () => grantTokens(linked, parent, gamer.token, 'openid sdk.social_layer');

  it("gives a child token with the parent's scope, no refresh_token, expiring with the parent", async () => {
    const tokens = await parentTokens();
    clock.advance(3_600_000);
    const response = await exchange({
      parent_access_token: tokens.access_token,
      child_application_id: child.id,
      parent_client_secret: parent.clientSecret,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as { access_token: string };
    expect(body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS - 3600,
      scope: tokens.scope,
    });
    expect(tokens.scope).toBe('openid sdk.social_layer');

    const me = await linked.api('/users/@me', { auth: `Bearer ${body.access_token}` });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { id: string }).id).toBe(gamer.id);
    const grant = await linked.api('/oauth2/@me', { auth: `Bearer ${body.access_token}` });
    expect(((await grant.json()) as { application: { id: string } }).application.id).toBe(child.id);

    clock.advance((ACCESS_TOKEN_TTL_SECONDS - 3600) * 1000);
    await expectError(await linked.api('/users/@me', { auth: `Bearer ${body.access_token}` }), 401, {
      message: '401: Unauthorized',
      code: 0,
    });
  });

  it('revoking the parent token with the parent’s credentials makes the child token 401', async () => {
    const tokens = await parentTokens();
    const response = await exchange({
      parent_access_token: tokens.access_token,
      child_application_id: child.id,
      parent_client_secret: parent.clientSecret,
    });
    const childToken = ((await response.json()) as { access_token: string }).access_token;
    expect((await linked.api('/users/@me', { auth: `Bearer ${childToken}` })).status).toBe(200);

    const revoked = await tokenRequest(
      linked,
      { token: tokens.access_token },
      { basic: [parent.id, parent.clientSecret], path: '/oauth2/token/revoke' },
    );
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toEqual({});
    await expectError(await linked.api('/users/@me', { auth: `Bearer ${childToken}` }), 401, {
      message: '401: Unauthorized',
      code: 0,
    });
  });

  it('revoking a child token with the child’s credentials ends it and leaves the parent token alive', async () => {
    const tokens = await parentTokens();
    const response = await exchange({
      parent_access_token: tokens.access_token,
      child_application_id: child.id,
      parent_client_secret: parent.clientSecret,
    });
    const childToken = ((await response.json()) as { access_token: string }).access_token;

    const revoked = await tokenRequest(
      linked,
      { token: childToken },
      { basic: [child.id, child.clientSecret], path: '/oauth2/token/revoke' },
    );
    expect(revoked.status).toBe(200);
    expect((await linked.api('/users/@me', { auth: `Bearer ${childToken}` })).status).toBe(401);
    expect((await linked.api('/users/@me', { auth: `Bearer ${tokens.access_token}` })).status).toBe(200);
  });

  it('refuses a parent without PublisherLinkingApproved with 403 code 50001', async () => {
    const tokens = await grantTokens(linked, unapproved, gamer.token, 'openid sdk.social_layer');
    await expectError(
      await exchange({
        parent_access_token: tokens.access_token,
        child_application_id: childOfUnapproved.id,
        parent_client_secret: unapproved.clientSecret,
      }),
      403,
      { code: 50001, message: 'Missing Access' },
    );
  });

  it.each([
    ['a child of another parent', () => childOfUnapproved.id],
    ['an application with no parent', () => unapproved.id],
    ['an unknown application', () => '1234567890123456789'],
  ])('refuses %s with 404 code 10002', async (_, childId) => {
    const tokens = await parentTokens();
    await expectError(
      await exchange({
        parent_access_token: tokens.access_token,
        child_application_id: childId(),
        parent_client_secret: parent.clientSecret,
      }),
      404,
      { code: 10002, message: 'Unknown Application' },
    );
  });

  it('refuses an unknown parent token with 403 code 50025', async () => {
    await expectError(
      await exchange({
        parent_access_token: 'not-a-token',
        child_application_id: child.id,
        parent_client_secret: parent.clientSecret,
      }),
      403,
      { code: 50025, message: 'Invalid OAuth2 access token provided' },
    );
  });

  it.each([
    ['a wrong parent secret', { parent_client_secret: 'wrong secret' }],
    ['a confidential parent without its secret', {}],
  ])('refuses %s with 401', async (_, secret: Record<string, string>) => {
    const tokens = await parentTokens();
    await expectError(
      await exchange({ parent_access_token: tokens.access_token, child_application_id: child.id, ...secret }),
      401,
      { message: '401: Unauthorized', code: 0 },
    );
  });
});
