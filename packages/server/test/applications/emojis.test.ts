import { FormErrors, Limits } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';
import { dataUri, PNG, PNG_BYTES, pngOfSize } from './images.js';

let hearth: TestHearth;
beforeAll(async () => {
  // 2,001 creations in a few seconds: the operator's global limit is raised, not the route's rules.
  hearth = await startHearth({ rateLimitGlobal: 100_000 });
});
afterAll(() => hearth.close());

const invalidForm = (errors: unknown) => ({ code: 50035, message: 'Invalid Form Body', errors });
const call = (game: TestGame, path: string, init: { method?: string; body?: unknown } = {}) =>
  hearth.api(`/applications/${game.id}/emojis${path}`, { auth: `Bot ${game.botToken}`, ...init });
const create = (game: TestGame, name: string, image = PNG) =>
  call(game, '', { method: 'POST', body: { name, image } });

async function expectBody(response: Response, status: number, body: unknown) {
  expect({ status: response.status, body: await response.json() }).toEqual({ status, body });
}

describe('Application emoji (DOCS emoji: List/Get/Create/Modify/Delete Application Emoji)', () => {
  it('creates, lists under `items`, gets, renames and deletes, with the bot as `user`', async () => {
    const game = await createGame(hearth);
    const created = await create(game, 'LUL');
    expect(created.status).toBe(201);
    const emoji = (await created.json()) as { id: string; user: { id: string } };
    expect(emoji).toEqual({
      id: expect.stringMatching(/^\d+$/),
      name: 'LUL',
      roles: [],
      user: expect.objectContaining({ id: game.botUserId, bot: true }),
      require_colons: true,
      managed: false,
      animated: false,
      available: true,
    });
    const list = (await (await call(game, '')).json()) as { items: Array<{ id: string }> };
    expect(list.items.map((item) => item.id)).toEqual([emoji.id]);
    expect(await (await call(game, `/${emoji.id}`)).json()).toEqual(emoji);
    const renamed = await call(game, `/${emoji.id}`, { method: 'PATCH', body: { name: 'KEKW' } });
    expect(await renamed.json()).toEqual({ ...emoji, name: 'KEKW' });
    // Served by the CDN route, as uploaded.
    const served = await fetch(`${hearth.url}/emojis/${emoji.id}.png`);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer())).toEqual(PNG_BYTES);
    expect((await call(game, `/${emoji.id}`, { method: 'DELETE' })).status).toBe(204);
    await expectBody(await call(game, `/${emoji.id}`), 404, { code: 10014, message: 'Unknown Emoji' });
    expect((await fetch(`${hearth.url}/emojis/${emoji.id}.png`)).status).toBe(404);
    expect(await (await call(game, '')).json()).toEqual({ items: [] });
  });

  it('another application’s emoji are out of reach: 50001 on its path, 10014 by id on one’s own', async () => {
    const game = await createGame(hearth);
    const other = await createGame(hearth);
    const theirs = (await (await create(other, 'theirs')).json()) as { id: string };
    await expectBody(
      await hearth.api(`/applications/${other.id}/emojis/${theirs.id}`, { auth: `Bot ${game.botToken}` }),
      403,
      { code: 50001, message: 'Missing Access' },
    );
    await expectBody(
      await hearth.api(`/applications/${other.id}/emojis`, {
        method: 'POST',
        auth: `Bot ${game.botToken}`,
        body: { name: 'mine', image: PNG },
      }),
      403,
      { code: 50001, message: 'Missing Access' },
    );
    await expectBody(await call(game, `/${theirs.id}`), 404, { code: 10014, message: 'Unknown Emoji' });
    await expectBody(await call(game, `/${theirs.id}`, { method: 'DELETE' }), 404, {
      code: 10014,
      message: 'Unknown Emoji',
    });
  });

  it('names: 2 to 32 letters, digits or underscores, one of each name per application', async () => {
    const game = await createGame(hearth);
    expect((await create(game, 'ab')).status).toBe(201);
    expect((await create(game, 'x'.repeat(32))).status).toBe(201);
    await expectBody(
      await create(game, 'a'),
      400,
      invalidForm({ name: { _errors: [FormErrors.badLength(2, 32)] } }),
    );
    await expectBody(
      await create(game, 'y'.repeat(33)),
      400,
      invalidForm({ name: { _errors: [FormErrors.badLength(2, 32)] } }),
    );
    await expectBody(
      await create(game, 'no-dash'),
      400,
      invalidForm({ name: { _errors: [FormErrors.invalid()] } }),
    );
    await expectBody(
      await create(game, 'ab'),
      400,
      invalidForm({ name: { _errors: [FormErrors.emojiNameTaken()] } }),
    );
    await expectBody(
      await call(game, '', { method: 'POST', body: { name: 'noimage' } }),
      400,
      invalidForm({ image: { _errors: [FormErrors.required()] } }),
    );
  });

  it('images: png, jpeg, gif or webp bytes of at most 256 KiB', async () => {
    const game = await createGame(hearth);
    const edge = pngOfSize(256 * 1024);
    expect((await create(game, 'edge', dataUri(edge))).status).toBe(201);
    await expectBody(
      await create(game, 'past', dataUri(pngOfSize(256 * 1024 + 1))),
      400,
      invalidForm({ image: { _errors: [FormErrors.imageTooLarge(256 * 1024)] } }),
    );
    await expectBody(
      await create(game, 'notpng', dataUri(Buffer.from('GIF89a, not really'), 'image/png')),
      400,
      invalidForm({ image: { _errors: [FormErrors.imageInvalid()] } }),
    );
    await expectBody(
      await create(game, 'svg', 'data:image/svg+xml;base64,PHN2Zy8+'),
      400,
      invalidForm({ image: { _errors: [FormErrors.imageInvalid()] } }),
    );
  });

  it(`holds ${Limits.applicationEmojisMax} per application, and refuses one more with 30008`, async () => {
    const game = await createGame(hearth);
    // Through the public route, eight at a time: the same small image under 2,000 names.
    const names = Array.from({ length: Limits.applicationEmojisMax }, (_, i) => `e${i}`);
    const started = performance.now();
    for (let i = 0; i < names.length; i += 8) {
      const statuses = await Promise.all(
        names.slice(i, i + 8).map(async (n) => (await create(game, n)).status),
      );
      expect(statuses.every((status) => status === 201)).toBe(true);
    }
    console.info(`2000 emoji created over HTTP in ${Math.round(performance.now() - started)} ms`);
    const list = (await (await call(game, '')).json()) as { items: unknown[] };
    expect(list.items).toHaveLength(Limits.applicationEmojisMax);
    await expectBody(await create(game, 'one_more'), 400, {
      code: 30008,
      message: 'Maximum number of emojis reached',
    });
    // Another application is not counted against it.
    expect((await create(await createGame(hearth), 'e0')).status).toBe(201);
  }, 120_000);
});
