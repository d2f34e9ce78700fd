import { createHash } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import {
  CDN_IMAGE_SIZES,
  DEFAULT_AVATAR_COLORS,
  defaultAvatarIndex,
  FormErrors,
  GatewayOpcodes,
  UserImageLimits,
} from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../test-support/oauth.js';
import { postgresAvailable, postgresSchema } from '../../../test-support/services.js';

/**
 * Issue 23, PATCH /users/@me: username, global_name, avatar and banner really change the user, USER_UPDATE
 * reaches the user's sessions, and the images come back through the CDN-style routes.
 */
let hearth: TestHearth;
let game: TestGame;
let origin: string;

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  origin = hearth.url;
  game = await createGame(hearth, { publicClient: true });
});
afterAll(() => hearth.close());

const invalidForm = (errors: unknown) => ({ code: 50035, message: 'Invalid Form Body', errors });
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
const dataUri = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;

// ---- Images built byte by byte here, not by the server's code ----

/** A 1×1 PNG (a well-known minimal file). */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
/** SOI, a baseline start-of-frame of 1×1 with one component, EOI. */
const JPEG = Buffer.from([
  0xff, 0xd8, 0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x11, 0x00, 0xff, 0xd9,
]);
/** RIFF, WEBP, one VP8L chunk of 5 bytes (padded to even). */
const WEBP = Buffer.concat([
  Buffer.from('RIFF'),
  Buffer.from([18, 0, 0, 0]),
  Buffer.from('WEBPVP8L'),
  Buffer.from([5, 0, 0, 0, 0x2f, 0, 0, 0, 0, 0]),
]);
/** A GIF of 1×1 with `frames` images. */
function gif(frames: number): Buffer {
  const head = Buffer.from([
    ...Buffer.from('GIF89a'),
    0x01,
    0x00,
    0x01,
    0x00,
    0x80,
    0x00,
    0x00, // screen 1×1, global table of 2 colours
    0x00,
    0x00,
    0x00,
    0xff,
    0xff,
    0xff,
  ]);
  const frame = Buffer.from([
    0x21,
    0xf9,
    0x04,
    0x00,
    0x0a,
    0x00,
    0x00,
    0x00, // graphic control: 0.1 s
    0x2c,
    0x00,
    0x00,
    0x00,
    0x00,
    0x01,
    0x00,
    0x01,
    0x00,
    0x00, // image 1×1
    0x02,
    0x02,
    0x44,
    0x01,
    0x00, // LZW data
  ]);
  return Buffer.concat([head, ...Array.from({ length: frames }, () => frame), Buffer.from([0x3b])]);
}

async function patchMe(auth: string, body: unknown): Promise<Response> {
  return hearth.api('/users/@me', { method: 'PATCH', auth, body });
}

async function expectRefused(response: Response, errors: unknown): Promise<void> {
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual(invalidForm(errors));
}

async function ok<T = Record<string, unknown>>(response: Response): Promise<T> {
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as T;
}

const cdn = (path: string) => fetch(`${origin}${path}`);

describe('PATCH /users/@me username (the platform’s username rules)', () => {
  it('changes the username; GET shows it; the user’s gateway session receives USER_UPDATE with the user object', async () => {
    const { user, token } = await createPlayer(hearth);
    const tokens = await grantTokens(hearth, game, token, 'openid sdk.social_layer');
    const session = await GatewayClient.connect(hearth.url);
    await session.nextOp(GatewayOpcodes.Hello);
    session.send({
      op: 2,
      d: { token: `Bearer ${tokens.access_token}`, properties: { os: 'linux', browser: 't', device: 't' } },
    });
    await session.nextDispatch('READY');

    const changed = await ok(await patchMe(token, { username: `renamed_${user.id}` }));
    expect(changed).toMatchObject({ id: user.id, username: `renamed_${user.id}`, discriminator: '0' });
    expect(await ok(await hearth.api('/users/@me', { auth: token }))).toMatchObject({
      username: `renamed_${user.id}`,
    });
    const update = await session.nextDispatch('USER_UPDATE');
    expect(update.d).toEqual({
      id: user.id,
      username: `renamed_${user.id}`,
      discriminator: '0',
      global_name: null,
      avatar: null,
      public_flags: 0,
      banner: null,
      accent_color: null,
      avatar_decoration_data: null,
      collectibles: null,
      primary_guild: null,
      flags: 0,
      mfa_enabled: false,
      locale: 'en-US',
      premium_type: 0,
    });
    await session.close();
  });

  it('refuses a username another person holds with 50035 USERNAME_ALREADY_TAKEN', async () => {
    const holder = await createPlayer(hearth);
    const { token } = await createPlayer(hearth);
    await expectRefused(await patchMe(token, { username: holder.user.username }), {
      username: { _errors: [FormErrors.usernameTaken()] },
    });
  });

  it('refuses what breaks the rules (2–32 of a-z 0-9 _ ., no "..") and non-strings, naming the field', async () => {
    const { token } = await createPlayer(hearth);
    for (const username of ['a', 'u'.repeat(33)]) {
      await expectRefused(await patchMe(token, { username }), {
        username: { _errors: [FormErrors.badLength(2, 32)] },
      });
    }
    for (const username of ['Upper', 'a..b', 'with space', 'émile']) {
      await expectRefused(await patchMe(token, { username }), {
        username: { _errors: [FormErrors.invalid()] },
      });
    }
    await expectRefused(await patchMe(token, { username: 5 }), {
      username: { _errors: [FormErrors.string(5)] },
    });
  });

  it('allows two changes an hour; the third is refused with USERNAME_RATE_LIMIT; repeating the current name costs nothing', async () => {
    const { user, token } = await createPlayer(hearth);
    await ok(await patchMe(token, { username: `first_${user.id}` }));
    await ok(await patchMe(token, { username: `first_${user.id}` }));
    await ok(await patchMe(token, { username: `second_${user.id}` }));
    await expectRefused(await patchMe(token, { username: `third_${user.id}` }), {
      username: { _errors: [FormErrors.usernameRateLimit()] },
    });
    expect(await ok(await hearth.api('/users/@me', { auth: token }))).toMatchObject({
      username: `second_${user.id}`,
    });
  });

  it('a bot renames itself with a bot name (spaces and capitals allowed, "@" "#" ":" not)', async () => {
    const bot = await createGame(hearth);
    const renamed = await ok(await patchMe(`Bot ${bot.botToken}`, { username: 'Cool Bot' }));
    expect(renamed).toMatchObject({ id: bot.botUserId, username: 'Cool Bot', bot: true });
    await expectRefused(await patchMe(`Bot ${bot.botToken}`, { username: 'bot@home' }), {
      username: { _errors: [FormErrors.invalid()] },
    });
  });
});

describe('PATCH /users/@me avatar and banner (image data), served by the CDN-style routes', () => {
  it('a PNG avatar gets the MD5 of its bytes as hash and is served back, for every valid size', async () => {
    const { user, token } = await createPlayer(hearth);
    const me = await ok(await patchMe(token, { avatar: dataUri('image/png', PNG) }));
    expect(me['avatar']).toBe(md5(PNG));
    for (const path of [
      `/avatars/${user.id}/${md5(PNG)}.png`,
      `/avatars/${user.id}/${md5(PNG)}.webp?size=64`,
    ]) {
      const served = await cdn(path);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await served.arrayBuffer())).toEqual(PNG);
    }
  });

  it('an animated GIF gets an a_ hash, a one-frame GIF does not; JPEG and WebP banners are kept as sent', async () => {
    const { user, token } = await createPlayer(hearth);
    const animated = gif(2);
    expect((await ok(await patchMe(token, { avatar: dataUri('image/gif', animated) })))['avatar']).toBe(
      `a_${md5(animated)}`,
    );
    const served = await cdn(`/avatars/${user.id}/a_${md5(animated)}.gif`);
    expect(served.headers.get('content-type')).toBe('image/gif');
    expect(Buffer.from(await served.arrayBuffer())).toEqual(animated);
    expect((await ok(await patchMe(token, { avatar: dataUri('image/gif', gif(1)) })))['avatar']).toBe(
      md5(gif(1)),
    );

    for (const [type, bytes] of [
      ['image/jpeg', JPEG],
      ['image/webp', WEBP],
    ] as const) {
      const me = await ok(await patchMe(token, { banner: dataUri(type, bytes) }));
      expect(me['banner']).toBe(md5(bytes));
      const banner = await cdn(`/banners/${user.id}/${md5(bytes)}.png?size=4096`);
      expect(banner.status).toBe(200);
      expect(banner.headers.get('content-type')).toBe(type);
      expect(Buffer.from(await banner.arrayBuffer())).toEqual(bytes);
    }
  });

  it('null removes the image: the user shows null and the old URL answers 404', async () => {
    const { user, token } = await createPlayer(hearth);
    await ok(await patchMe(token, { avatar: dataUri('image/png', PNG) }));
    expect((await ok(await patchMe(token, { avatar: null })))['avatar']).toBeNull();
    const gone = await cdn(`/avatars/${user.id}/${md5(PNG)}.png`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ code: 0, message: '404: Not Found' });
  });

  it('refuses bad image data with 50035 naming the field, never a 5xx', async () => {
    const { token } = await createPlayer(hearth);
    const truncated = PNG.subarray(0, PNG.length - 12);
    const cases: [string, unknown][] = [
      ['avatar', 'not a data uri'],
      ['avatar', 'data:image/bmp;base64,Qk0='],
      ['avatar', 'data:image/png;base64,@@@@'],
      ['avatar', 'data:image/png;base64,iVBORw0'],
      ['avatar', dataUri('image/png', JPEG)], // a PNG header lie
      ['banner', dataUri('image/jpeg', PNG)],
      ['banner', dataUri('image/png', truncated)],
      ['banner', dataUri('image/gif', Buffer.from('GIF89a'))],
      ['banner', dataUri('image/webp', Buffer.from('RIFF0000WEBPVP8 '))],
    ];
    for (const [field, value] of cases) {
      await expectRefused(await patchMe(token, { [field]: value }), {
        [field]: { _errors: [FormErrors.imageInvalid()] },
      });
    }
    await expectRefused(await patchMe(token, { avatar: 42 }), {
      avatar: { _errors: [FormErrors.string(42)] },
    });
  });

  it(`refuses an image over ${UserImageLimits.maxBytes} bytes with BINARY_TYPE_MAX_SIZE`, async () => {
    const { token } = await createPlayer(hearth);
    const base64 = 'A'.repeat(Math.ceil((UserImageLimits.maxBytes + 1) / 3) * 4);
    await expectRefused(await patchMe(token, { banner: `data:image/png;base64,${base64}` }), {
      banner: { _errors: [FormErrors.imageTooLarge(UserImageLimits.maxBytes)] },
    });
  });

  it('a bot sets its avatar; another user’s hash or an unknown file answers 404; a bad size 400', async () => {
    const bot = await createGame(hearth);
    const me = await ok(await patchMe(`Bot ${bot.botToken}`, { avatar: dataUri('image/png', PNG) }));
    expect(me['avatar']).toBe(md5(PNG));
    const other = await createPlayer(hearth);
    expect((await cdn(`/avatars/${other.user.id}/${md5(PNG)}.png`)).status).toBe(404);
    expect((await cdn(`/avatars/${bot.botUserId}/${md5(PNG)}.bmp`)).status).toBe(404);
    for (const size of ['100', '8', '8192', 'x', '-16']) {
      const refused = await cdn(`/avatars/${bot.botUserId}/${md5(PNG)}.png?size=${size}`);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual(
        invalidForm({ size: { _errors: [FormErrors.choices(CDN_IMAGE_SIZES)] } }),
      );
    }
  });
});

/** Width, height and the one palette colour of a PNG the server drew, read with node:zlib only. */
function readPng(bytes: Buffer): { width: number; height: number; rgb: number; rows: number } {
  expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  let offset = 8;
  const chunks = new Map<string, Buffer[]>();
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    chunks.set(type, [...(chunks.get(type) ?? []), bytes.subarray(offset + 8, offset + 8 + length)]);
    offset += 12 + length;
  }
  const header = chunks.get('IHDR')![0]!;
  const palette = chunks.get('PLTE')![0]!;
  const width = header.readUInt32BE(0);
  const pixels = inflateSync(Buffer.concat(chunks.get('IDAT')!));
  return {
    width,
    height: header.readUInt32BE(4),
    rgb: palette.readUIntBE(0, 3),
    rows: pixels.length / (1 + Math.ceil(width / 8)),
  };
}

describe('GET /embed/avatars/{index}.png: the default avatar (seed: Records, User)', () => {
  it('serves six PNGs, one colour each, 256 px unless a size is asked', async () => {
    for (const [index, color] of DEFAULT_AVATAR_COLORS.entries()) {
      const served = await cdn(`/embed/avatars/${index}.png`);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe('image/png');
      expect(readPng(Buffer.from(await served.arrayBuffer()))).toEqual({
        width: 256,
        height: 256,
        rgb: color,
        rows: 256,
      });
    }
    const small = await cdn('/embed/avatars/3.png?size=16');
    expect(readPng(Buffer.from(await small.arrayBuffer()))).toMatchObject({ width: 16, height: 16 });
    expect((await cdn('/embed/avatars/6.png')).status).toBe(404);
    expect((await cdn('/embed/avatars/0.png?size=3')).status).toBe(400);
  });

  it("a user's default avatar index follows (id >> 22) % 6, or discriminator % 5 for legacy users", async () => {
    expect(defaultAvatarIndex({ id: String(5n << 22n), discriminator: '0' })).toBe(5);
    expect(defaultAvatarIndex({ id: String(7n << 22n), discriminator: '0' })).toBe(1);
    expect(defaultAvatarIndex({ id: '1', discriminator: '1337' })).toBe(2);
    const { user } = await createPlayer(hearth);
    const index = defaultAvatarIndex(user);
    expect((await cdn(`/embed/avatars/${index}.png`)).status).toBe(200);
  });
});

const postgresUp = await postgresAvailable();

describe.skipIf(!postgresUp)('avatars on PostgreSQL (bytea)', () => {
  it('an avatar set on PostgreSQL is served back byte for byte, and USER_UPDATE comes through its event log', async () => {
    const schema = postgresSchema();
    const server = await startHearth({ databaseUrl: schema.url, rateLimitGlobal: 1_000_000 });
    try {
      const { user, token } = await createPlayer(server);
      const bot = await createGame(server, { publicClient: true });
      const tokens = await grantTokens(server, bot, token, 'openid sdk.social_layer');
      const session = await GatewayClient.connect(server.url);
      await session.nextOp(GatewayOpcodes.Hello);
      session.send({
        op: 2,
        d: { token: `Bearer ${tokens.access_token}`, properties: { os: 'linux', browser: 't', device: 't' } },
      });
      await session.nextDispatch('READY');
      const animated = gif(3);
      const patched = await server.api('/users/@me', {
        method: 'PATCH',
        auth: token,
        body: { avatar: dataUri('image/gif', animated) },
      });
      expect((await ok(patched))['avatar']).toBe(`a_${md5(animated)}`);
      expect((await session.nextDispatch('USER_UPDATE')).d).toMatchObject({ avatar: `a_${md5(animated)}` });
      const served = await fetch(`${server.url}/avatars/${user.id}/a_${md5(animated)}.gif`);
      expect(Buffer.from(await served.arrayBuffer())).toEqual(animated);
      await session.close();
    } finally {
      await server.close();
      await schema.drop();
    }
  });
});
