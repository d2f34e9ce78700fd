import { EntitlementTypes, SKUFlags, SKUTypes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../../test-support/oauth.js';
import { requiredKeys } from '../../../../test-support/openapi.js';

let hearth: TestHearth;
let game: TestGame;
let other: TestGame;
let player: { id: string; token: string };
let durable: string;
let consumable: string;
let subscriptionSku: string;

beforeAll(async () => {
  hearth = await startHearth();
  game = await createGame(hearth);
  other = await createGame(hearth);
  const created = await createPlayer(hearth);
  player = { id: created.user.id, token: created.token };
  const { entitlements } = hearth.services;
  durable = (await entitlements.createSku(game.id, { name: 'Golden Sword', type: 'durable' })).id;
  consumable = (await entitlements.createSku(game.id, { name: 'Potion', type: 'consumable' })).id;
  subscriptionSku = (await entitlements.createSku(game.id, { name: 'Season Pass', type: 'subscription' })).id;
});
afterAll(() => hearth.close());

const asBot = (path: string, init: { method?: string; body?: unknown } = {}, bot = game) =>
  hearth.api(path, { ...init, auth: `Bot ${bot.botToken}` });

async function expectError(response: Response, status: number, body: unknown): Promise<void> {
  expect(response.status).toBe(status);
  expect(await response.json()).toEqual(body);
}

const formError = (path: string, code: string) => {
  const errors: Record<string, unknown> = {};
  let node = errors;
  const keys = path.split('.');
  keys.forEach((key, index) => {
    node[key] = index === keys.length - 1 ? { _errors: [expect.objectContaining({ code })] } : {};
    node = node[key] as Record<string, unknown>;
  });
  return { code: 50035, message: 'Invalid Form Body', errors };
};

describe('GET /applications/{app}/skus (PROTOCOL.md §I.2)', () => {
  it('lists the SKUs, a subscription with its SUBSCRIPTION_GROUP twin', async () => {
    const response = await asBot(`/applications/${game.id}/skus`);
    expect(response.status).toBe(200);
    const skus = (await response.json()) as { id: string; type: number; flags: number; slug: string }[];
    expect(skus.map((sku) => sku.type)).toEqual([
      SKUTypes.Durable,
      SKUTypes.Consumable,
      SKUTypes.Subscription,
      SKUTypes.SubscriptionGroup,
    ]);
    expect(skus[0]).toEqual({
      id: durable,
      type: 2,
      application_id: game.id,
      name: 'Golden Sword',
      slug: 'golden-sword',
      flags: SKUFlags.Available,
      dependent_sku_id: null,
      manifest_labels: null,
      access_type: 1,
      features: [],
      release_date: null,
      premium: false,
      show_age_gate: false,
    });
    expect(skus[2]?.flags).toBe(SKUFlags.Available | SKUFlags.UserSubscription);
  });

  it("another application's bot gets 50001, a malformed id 50035, no token 401", async () => {
    await expectError(await asBot(`/applications/${game.id}/skus`, {}, other), 403, {
      code: 50001,
      message: 'Missing Access',
    });
    expect((await asBot('/applications/abc/skus')).status).toBe(400);
    expect((await hearth.api(`/applications/${game.id}/skus`)).status).toBe(401);
  });
});

describe('test entitlements, consume, delete (PROTOCOL.md §I.1)', () => {
  it('POST grants a TEST_MODE_PURCHASE entitlement with starts_at and ends_at as GET shows it; DELETE marks it deleted', async () => {
    const created = await asBot(`/applications/${game.id}/entitlements`, {
      method: 'POST',
      body: { sku_id: durable, owner_id: player.id, owner_type: 2 },
    });
    expect(created.status).toBe(200);
    const entitlement = (await created.json()) as Record<string, unknown>;
    expect(entitlement).toEqual({
      id: expect.any(String),
      sku_id: durable,
      application_id: game.id,
      user_id: player.id,
      type: EntitlementTypes.TestModePurchase,
      deleted: false,
      consumed: false,
      starts_at: null,
      ends_at: null,
      promotion_id: null,
      gift_code_flags: 0,
    });
    const got = await asBot(`/applications/${game.id}/entitlements/${entitlement['id']}`);
    expect(await got.json()).toEqual(entitlement);
    const deleted = await asBot(`/applications/${game.id}/entitlements/${entitlement['id']}`, {
      method: 'DELETE',
    });
    expect(deleted.status).toBe(204);
    const list = await asBot(`/applications/${game.id}/entitlements?user_id=${player.id}`);
    expect(((await list.json()) as { id: string }[]).map((e) => e.id)).not.toContain(entitlement['id']);
    const withDeleted = await asBot(
      `/applications/${game.id}/entitlements?user_id=${player.id}&exclude_deleted=false`,
    );
    expect(await withDeleted.json()).toContainEqual({ ...entitlement, deleted: true });
  });

  it('refuses bad bodies, unknown SKUs and owners, and deleting a real purchase (40019)', async () => {
    const post = (body: unknown) => asBot(`/applications/${game.id}/entitlements`, { method: 'POST', body });
    await expectError(
      await post({ owner_id: player.id, owner_type: 2 }),
      400,
      formError('sku_id', 'BASE_TYPE_REQUIRED'),
    );
    await expectError(
      await post({ sku_id: durable, owner_id: player.id, owner_type: 3 }),
      400,
      formError('owner_type', 'BASE_TYPE_CHOICES'),
    );
    await expectError(
      await post({ sku_id: durable, owner_id: 'me', owner_type: 2 }),
      400,
      formError('owner_id', 'NUMBER_TYPE_COERCE'),
    );
    await expectError(await post({ sku_id: '1', owner_id: player.id, owner_type: 2 }), 404, {
      code: 10027,
      message: 'Unknown SKU',
    });
    await expectError(await post({ sku_id: durable, owner_id: '1', owner_type: 2 }), 404, {
      code: 10013,
      message: 'Unknown User',
    });
    await expectError(await post({ sku_id: durable, owner_id: '1', owner_type: 1 }), 404, {
      code: 10004,
      message: 'Unknown Guild',
    });
    // Another application's SKU is unknown to this one.
    const foreign = await hearth.services.entitlements.createSku(other.id, {
      name: 'Theirs',
      type: 'durable',
    });
    await expectError(await post({ sku_id: foreign.id, owner_id: player.id, owner_type: 2 }), 404, {
      code: 10027,
      message: 'Unknown SKU',
    });
    const { entitlement } = await hearth.services.entitlements.purchase({
      applicationId: game.id,
      userId: player.id,
      skuId: durable,
    });
    await expectError(
      await asBot(`/applications/${game.id}/entitlements/${entitlement.id}`, { method: 'DELETE' }),
      400,
      {
        code: 40019,
        message: 'You can only delete sandbox entitlements.',
      },
    );
    await expectError(await asBot(`/applications/${game.id}/entitlements/1`, { method: 'DELETE' }), 404, {
      code: 10029,
      message: 'Unknown Entitlement',
    });
    await expectError(
      await asBot(`/applications/${game.id}/entitlements/${entitlement.id}`, { method: 'DELETE' }, other),
      403,
      { code: 50001, message: 'Missing Access' },
    );
  });

  it('consumes a consumable purchase (204) and refuses any other with 40018', async () => {
    const { entitlements } = hearth.services;
    const potion = await entitlements.purchase({
      applicationId: game.id,
      userId: player.id,
      skuId: consumable,
    });
    const sword = await entitlements.purchase({ applicationId: game.id, userId: player.id, skuId: durable });
    const consume = (id: string) =>
      asBot(`/applications/${game.id}/entitlements/${id}/consume`, { method: 'POST' });
    expect((await consume(potion.entitlement.id)).status).toBe(204);
    const after = await asBot(`/applications/${game.id}/entitlements/${potion.entitlement.id}`);
    expect(await after.json()).toMatchObject({ consumed: true, type: EntitlementTypes.Purchase });
    await expectError(await consume(sword.entitlement.id), 400, {
      code: 40018,
      message: 'Only consumable SKUs can be consumed',
    });
  });
});

describe('GET /applications/{app}/entitlements filters and pages (PROTOCOL.md §I.1)', () => {
  it('filters by user and SKU, pages by id with limit, and excludes ended ones on request', async () => {
    const { user } = await createPlayer(hearth);
    const { entitlements } = hearth.services;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (await entitlements.purchase({ applicationId: game.id, userId: user.id, skuId: durable })).entitlement
          .id,
      );
    }
    const sub = await entitlements.purchase({
      applicationId: game.id,
      userId: user.id,
      skuId: subscriptionSku,
    });
    await entitlements.end(sub.subscription!.id);
    const list = async (query: string) => {
      const response = await asBot(`/applications/${game.id}/entitlements?user_id=${user.id}${query}`);
      expect(response.status).toBe(200);
      return ((await response.json()) as { id: string }[]).map((e) => e.id);
    };
    expect(await list('')).toEqual([...ids, sub.entitlement.id]);
    expect(await list('&exclude_ended=true')).toEqual(ids);
    expect(await list(`&sku_ids=${durable}`)).toEqual(ids);
    expect(await list('&limit=2')).toEqual(ids.slice(0, 2));
    expect(await list(`&after=${ids[0]}&limit=1`)).toEqual([ids[1]]);
    expect(await list(`&before=${sub.entitlement.id}&limit=2`)).toEqual(ids.slice(1));
    for (const [query, path, code] of [
      ['&limit=0', 'limit', 'NUMBER_TYPE_MIN'],
      ['&limit=101', 'limit', 'NUMBER_TYPE_MAX'],
      ['&sku_ids=a,b', 'sku_ids', 'BASE_TYPE_INVALID'],
      ['&exclude_ended=maybe', 'exclude_ended', 'BASE_TYPE_BOOLEAN'],
    ] as const) {
      const response = await asBot(`/applications/${game.id}/entitlements?user_id=${user.id}${query}`);
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
      expect(await response.json()).toEqual(formError(path, code));
    }
    expect(await list('&limit=100')).toHaveLength(4);
  });

  it("a player's bearer token (applications.entitlements) reads its own entitlements only", async () => {
    const tokens = await grantTokens(hearth, game, player.token, 'identify applications.entitlements');
    const bearer = `Bearer ${tokens.access_token}`;
    const mine = await hearth.api(`/applications/${game.id}/entitlements`, { auth: bearer });
    expect(mine.status).toBe(200);
    const rows = (await mine.json()) as { user_id: string }[];
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((row) => row.user_id === player.id)).toBe(true);
    const stranger = await createPlayer(hearth);
    await expectError(
      await hearth.api(`/applications/${game.id}/entitlements?user_id=${stranger.user.id}`, { auth: bearer }),
      403,
      { code: 50001, message: 'Missing Access' },
    );
    // A token without the scope, and a token of another application, are refused.
    const narrow = await grantTokens(hearth, game, player.token, 'identify');
    expect(
      (await hearth.api(`/applications/${game.id}/entitlements`, { auth: `Bearer ${narrow.access_token}` }))
        .status,
    ).toBe(403);
    await expectError(await hearth.api(`/applications/${other.id}/entitlements`, { auth: bearer }), 403, {
      code: 50001,
      message: 'Missing Access',
    });
    // The platform client's session token is not accepted.
    expect(
      (await hearth.api(`/users/@me/applications/${game.id}/entitlements`, { auth: player.token })).status,
    ).toBe(401);
  });
});

describe('GET /skus/{sku}/subscriptions (PROTOCOL.md §I.3)', () => {
  it("lists a user's subscriptions of the SKU and reads one; the bot must name the user", async () => {
    const { user } = await createPlayer(hearth);
    const { subscription } = await hearth.services.entitlements.purchase({
      applicationId: game.id,
      userId: user.id,
      skuId: subscriptionSku,
    });
    const listed = await asBot(`/skus/${subscriptionSku}/subscriptions?user_id=${user.id}`);
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([subscription]);
    const one = await asBot(`/skus/${subscriptionSku}/subscriptions/${subscription!.id}`);
    const body = (await one.json()) as Record<string, unknown>;
    expect(body).toEqual(subscription);
    expect(Object.keys(body)).toEqual(expect.arrayContaining(requiredKeys('SubscriptionResponse')));
    const entitlement = await asBot(
      `/applications/${game.id}/entitlements/${subscription!.entitlement_ids[0]}`,
    );
    expect(Object.keys((await entitlement.json()) as object)).toEqual(
      expect.arrayContaining(requiredKeys('EntitlementResponse')),
    );
    await expectError(
      await asBot(`/skus/${subscriptionSku}/subscriptions`),
      400,
      formError('user_id', 'BASE_TYPE_REQUIRED'),
    );
    await expectError(
      await asBot(`/skus/${subscriptionSku}/subscriptions?user_id=${user.id}`, {}, other),
      404,
      {
        code: 10027,
        message: 'Unknown SKU',
      },
    );
    expect((await asBot(`/skus/${durable}/subscriptions/${subscription!.id}`)).status).toBe(404);
    expect((await asBot(`/skus/${subscriptionSku}/subscriptions?user_id=${user.id}&limit=101`)).status).toBe(
      400,
    );
  });
});
