import { FormErrors } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  consentLocation,
  createGame,
  createPlayer,
  type TestGame,
  tokenRequest,
} from '../../../../test-support/oauth.js';
import { PNG, PNG_BYTES } from './images.js';

let hearth: TestHearth;
beforeAll(async () => {
  hearth = await startHearth();
});
afterAll(() => hearth.close());

const invalidForm = (errors: unknown) => ({ code: 50035, message: 'Invalid Form Body', errors });
const patch = (game: TestGame, body: unknown, path = '/applications/@me') =>
  hearth.api(path, { method: 'PATCH', auth: `Bot ${game.botToken}`, body });
const get = (game: TestGame, path = '/applications/@me') =>
  hearth.api(path, { auth: `Bot ${game.botToken}` });

async function expectBody(response: Response, status: number, body: unknown) {
  expect({ status: response.status, body: await response.json() }).toEqual({ status, body });
}

describe('integration_types_config (DOCS application: Application Integration Type Configuration)', () => {
  it('starts with both install types and no install parameters', async () => {
    const game = await createGame(hearth);
    const body = (await (await get(game)).json()) as Record<string, unknown>;
    expect(body['integration_types_config']).toEqual({ '0': {}, '1': {} });
    expect(body).not.toHaveProperty('install_params');
    expect(body).toMatchObject({ bot_public: true, bot_require_code_grant: false, team: null, icon: null });
  });

  it('is editable per install type, and install_params is the guild install’s parameters', async () => {
    const game = await createGame(hearth);
    const response = await patch(game, {
      integration_types_config: {
        '0': { oauth2_install_params: { scopes: ['applications.commands', 'bot'], permissions: '2048' } },
        '1': { oauth2_install_params: { scopes: ['applications.commands'], permissions: '0' } },
      },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body['integration_types_config']).toEqual({
      '0': { oauth2_install_params: { scopes: ['applications.commands', 'bot'], permissions: '2048' } },
      '1': { oauth2_install_params: { scopes: ['applications.commands'], permissions: '0' } },
    });
    expect(body['install_params']).toEqual({ scopes: ['applications.commands', 'bot'], permissions: '2048' });
    // One key changed, the other kept; null drops an install type.
    const second = (await (await patch(game, { integration_types_config: { '1': null } })).json()) as Record<
      string,
      unknown
    >;
    expect(second['integration_types_config']).toEqual({
      '0': { oauth2_install_params: { scopes: ['applications.commands', 'bot'], permissions: '2048' } },
    });
    // install_params writes the guild install's parameters.
    const third = (await (
      await patch(game, { install_params: { scopes: ['applications.commands'], permissions: '0' } })
    ).json()) as Record<string, unknown>;
    expect(third['integration_types_config']).toEqual({
      '0': { oauth2_install_params: { scopes: ['applications.commands'], permissions: '0' } },
    });
    expect((await (await get(game, '/oauth2/applications/@me')).json()) as object).toMatchObject({
      install_params: { scopes: ['applications.commands'], permissions: '0' },
    });
  });

  it('refuses a scope outside the install scopes, and names it', async () => {
    const game = await createGame(hearth);
    await expectBody(
      await patch(game, {
        integration_types_config: {
          '0': { oauth2_install_params: { scopes: ['bot', 'identifyy'], permissions: '0' } },
        },
      }),
      400,
      invalidForm({
        integration_types_config: {
          '0': {
            oauth2_install_params: {
              scopes: { '1': { _errors: [FormErrors.choices(['bot', 'applications.commands'])] } },
            },
          },
        },
      }),
    );
  });

  it('refuses `bot` in a user install', async () => {
    const game = await createGame(hearth);
    await expectBody(
      await patch(game, {
        integration_types_config: { '1': { oauth2_install_params: { scopes: ['bot'], permissions: '0' } } },
      }),
      400,
      invalidForm({
        integration_types_config: {
          '1': {
            oauth2_install_params: { scopes: { '0': { _errors: [FormErrors.botScopeGuildInstallOnly()] } } },
          },
        },
      }),
    );
  });

  it('refuses an unknown install type, a permission that is no bitfield, and empty scopes', async () => {
    const game = await createGame(hearth);
    await expectBody(
      await patch(game, { integration_types_config: { '2': {} } }),
      400,
      invalidForm({ integration_types_config: { '2': { _errors: [FormErrors.choices(['0', '1'])] } } }),
    );
    await expectBody(
      await patch(game, { install_params: { scopes: ['bot'], permissions: 'all' } }),
      400,
      invalidForm({ install_params: { permissions: { _errors: [FormErrors.integer('all')] } } }),
    );
    await expectBody(
      await patch(game, { install_params: { scopes: [], permissions: '0' } }),
      400,
      invalidForm({ install_params: { scopes: { _errors: [FormErrors.minItems(1)] } } }),
    );
    expect(((await (await get(game)).json()) as Record<string, unknown>)['integration_types_config']).toEqual(
      {
        '0': {},
        '1': {},
      },
    );
  });

  it('keeps custom_install_url and install parameters apart', async () => {
    const game = await createGame(hearth);
    expect((await patch(game, { custom_install_url: 'https://game.example/install' })).status).toBe(200);
    await expectBody(
      await patch(game, { install_params: { scopes: ['bot'], permissions: '8' } }),
      400,
      invalidForm({ install_params: { _errors: [FormErrors.installParamsExclusive()] } }),
    );
    // Clearing the URL in the same request lets the parameters in.
    const body = (await (
      await patch(game, { custom_install_url: null, install_params: { scopes: ['bot'], permissions: '8' } })
    ).json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty('custom_install_url');
    await expectBody(
      await patch(game, { custom_install_url: 'https://game.example/install' }),
      400,
      invalidForm({ custom_install_url: { _errors: [FormErrors.installParamsExclusive()] } }),
    );
  });
});

describe('PATCH /applications/@me fields', () => {
  it('tags: five of up to 20 characters; a sixth or a 21st character is refused', async () => {
    const game = await createGame(hearth);
    const five = ['a', 'b', 'c', 'd', 'x'.repeat(20)];
    expect(((await (await patch(game, { tags: five })).json()) as { tags: string[] }).tags).toEqual(five);
    const six = await patch(game, { tags: [...five.slice(0, 4), 'e', 'f'] });
    expect(six.status).toBe(400);
    expect(((await six.json()) as { errors: object }).errors).toEqual({
      tags: { _errors: [FormErrors.maxItems(5)] },
    });
    const long = await patch(game, { tags: ['y'.repeat(21)] });
    expect(long.status).toBe(400);
    expect(((await long.json()) as { errors: object }).errors).toEqual({
      tags: { '0': { _errors: [FormErrors.badLength(1, 20)] } },
    });
  });

  it('description, role_connections_verification_url, bot_public and bot_require_code_grant', async () => {
    const game = await createGame(hearth);
    const response = await patch(game, {
      description: 'A game',
      role_connections_verification_url: 'https://game.example/verify',
      bot_public: false,
      bot_require_code_grant: true,
    });
    expect(await response.json()).toMatchObject({
      description: 'A game',
      role_connections_verification_url: 'https://game.example/verify',
      bot_public: false,
      bot_require_code_grant: true,
    });
    const bad = await patch(game, { role_connections_verification_url: 'not a url' });
    expect(bad.status).toBe(400);
  });

  it('icon and cover_image are uploaded as data URIs and served under /app-icons', async () => {
    const game = await createGame(hearth);
    const body = (await (await patch(game, { icon: PNG, cover_image: PNG })).json()) as Record<
      string,
      string
    >;
    expect(body['icon']).toMatch(/^[0-9a-f]{32}$/);
    expect(body['cover_image']).toBe(body['icon']);
    const served = await fetch(`${hearth.url}/app-icons/${game.id}/${body['icon']}.png`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer())).toEqual(PNG_BYTES);
    await expectBody(
      await patch(game, { icon: 'data:image/png;base64,AAAA' }),
      400,
      invalidForm({ icon: { _errors: [FormErrors.imageInvalid()] } }),
    );
    const cleared = (await (await patch(game, { icon: null })).json()) as Record<string, unknown>;
    expect(cleared['icon']).toBeNull();
    expect((await fetch(`${hearth.url}/app-icons/${game.id}/${body['icon']}.png`)).status).toBe(200);
    expect((await fetch(`${hearth.url}/app-icons/${game.id}/${'0'.repeat(32)}.png`)).status).toBe(404);
  });

  it('approximate counts are numbers the server keeps', async () => {
    const game = await createGame(hearth);
    expect(await (await get(game)).json()).toMatchObject({
      approximate_guild_count: 0,
      approximate_user_install_count: 0,
      approximate_user_authorization_count: 0,
    });
  });
});

describe('GET/PATCH /applications/{application_id} (SPEC)', () => {
  it('answers the bot’s own application, and refuses another application with 50001', async () => {
    const game = await createGame(hearth);
    const other = await createGame(hearth);
    const own = await get(game, `/applications/${game.id}`);
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({ id: game.id });
    await expectBody(await get(game, `/applications/${other.id}`), 403, {
      code: 50001,
      message: 'Missing Access',
    });
    await expectBody(await patch(game, { description: 'x' }, `/applications/${other.id}`), 403, {
      code: 50001,
      message: 'Missing Access',
    });
    const edited = await patch(game, { description: 'by id' }, `/applications/${game.id}`);
    expect(await edited.json()).toMatchObject({ description: 'by id' });
  });

  it('a user token is not a bot token', async () => {
    const game = await createGame(hearth);
    const { token } = await createPlayer(hearth);
    const response = await hearth.api(`/applications/${game.id}`, { auth: token });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { code: number }).code).toBe(20002);
  });
});

describe('the authorize flow takes its default install parameters from integration_types_config', () => {
  it('a request without `scope` gets the install type’s scopes; one with `scope` keeps its own', async () => {
    const game = await createGame(hearth);
    expect(
      (
        await patch(game, {
          integration_types_config: {
            '1': { oauth2_install_params: { scopes: ['applications.commands'], permissions: '0' } },
          },
        })
      ).status,
    ).toBe(200);
    const { token } = await createPlayer(hearth);
    const base = { client_id: game.id, redirect_uri: 'http://127.0.0.1/callback', response_type: 'code' };
    const location = await consentLocation(hearth, token, { ...base, integration_type: '1' });
    const code = location.searchParams.get('code');
    expect(code).toMatch(/.+/);
    const exchanged = await tokenRequest(hearth, {
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: 'http://127.0.0.1/callback',
      client_id: game.id,
      client_secret: game.clientSecret,
    });
    expect(((await exchanged.json()) as { scope: string }).scope).toBe('applications.commands');
    // No default for the guild install: an empty scope, refused as before.
    const refused = await consentLocation(hearth, token, base);
    expect(refused.searchParams.get('error')).toBe('invalid_scope');
  });
});
