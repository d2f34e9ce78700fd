import { RpcLimits } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';

/** An application's RPC origins (PROTOCOL.md §H): set where its fields are edited, read by the agent. */
describe('application rpc_origins', () => {
  let hearth: TestHearth;
  let game: TestGame;

  beforeAll(async () => {
    hearth = await startHearth();
    game = await createGame(hearth, { name: 'Origin Quest' });
  });
  afterAll(() => hearth?.close());

  const patch = (body: unknown) =>
    hearth.api('/applications/@me', { method: 'PATCH', auth: `Bot ${game.botToken}`, body });

  it('a new application has none; PATCH /applications/@me sets them; GET /applications/{id}/rpc shows them', async () => {
    const fresh = await hearth.api(`/applications/${game.id}/rpc`);
    expect(fresh.status).toBe(200);
    expect(await fresh.json()).toEqual({
      id: game.id,
      name: 'Origin Quest',
      icon: null,
      description: '',
      summary: '',
      type: null,
      verify_key: expect.any(String),
      flags: 0,
      rpc_origins: [],
    });

    const updated = await patch({ rpc_origins: ['https://game.example', 'http://localhost:3000'] });
    expect(updated.status).toBe(200);
    expect(await updated.json()).toMatchObject({
      rpc_origins: ['https://game.example', 'http://localhost:3000'],
    });
    const read = await hearth.api(`/applications/${game.id}/rpc`);
    expect(await read.json()).toMatchObject({
      rpc_origins: ['https://game.example', 'http://localhost:3000'],
    });

    expect(await (await patch({ rpc_origins: null })).json()).toMatchObject({ rpc_origins: [] });
  });

  it('refuses a non-URL, an over-long origin and more than the limit, with the field named', async () => {
    const notUrl = await patch({ rpc_origins: ['not a url'] });
    expect(notUrl.status).toBe(400);
    expect(await notUrl.json()).toMatchObject({
      code: 50035,
      errors: { rpc_origins: { '0': expect.any(Object) } },
    });

    const tooMany = Array.from({ length: RpcLimits.originsMax + 1 }, (_, i) => `https://g${i}.example`);
    const many = await patch({ rpc_origins: tooMany });
    expect(many.status).toBe(400);
    expect(await many.json()).toMatchObject({ code: 50035, errors: { rpc_origins: expect.any(Object) } });
    const limit = await patch({ rpc_origins: tooMany.slice(0, RpcLimits.originsMax) });
    expect(limit.status).toBe(200);

    const long = `https://game.example/${'a'.repeat(RpcLimits.originMaxLength)}`;
    expect((await patch({ rpc_origins: [long] })).status).toBe(400);
    expect((await patch({ rpc_origins: 'https://game.example' })).status).toBe(400);
  });

  it('GET /applications/{id}/rpc: unknown application 10002, a malformed id 50035', async () => {
    const unknown = await hearth.api('/applications/123456789012345678/rpc');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ code: 10002, message: 'Unknown Application' });
    const malformed = await hearth.api('/applications/abc/rpc');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ code: 50035 });
  });

  it('the operator sets them too (hearth apps update --rpc-origin)', async () => {
    const other = await createGame(hearth);
    const updated = await hearth.services.applications.adminUpdate(other.id, {
      rpc_origins: ['https://op.example'],
    });
    expect(updated.rpcOrigins).toEqual(['https://op.example']);
  });
});
