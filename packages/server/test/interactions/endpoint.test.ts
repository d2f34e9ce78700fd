import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { click, connect, Endpoint, postComponents, type Scene, scene } from './support.js';

/**
 * DOCS interactions/overview: an app with an interactions endpoint receives each interaction as a signed
 * POST, which `discord-interactions`' verifyKey (the library apps use) accepts; the URL is verified with a
 * PING and a badly signed request before it is saved.
 */

let hearth: TestHearth;
let s: Scene;
let publicKey: string;
let endpoint: Endpoint;

async function setEndpoint(url: string | null) {
  return hearth.api('/applications/@me', {
    method: 'PATCH',
    auth: `Bot ${s.game.botToken}`,
    body: { interactions_endpoint_url: url },
  });
}

beforeAll(async () => {
  hearth = await startHearth();
  s = await scene(hearth, 'Endpoint');
  const app = await hearth.api('/applications/@me', { auth: `Bot ${s.game.botToken}` });
  publicKey = ((await app.json()) as { verify_key: string }).verify_key;
  endpoint = await Endpoint.listen(publicKey);
});

afterAll(async () => {
  await endpoint.close();
  await hearth.close();
});

describe('Endpoint verification (interactions_endpoint_url)', () => {
  it('refuses an endpoint that accepts a bad signature, with the platform error, and saves nothing', async () => {
    endpoint.checks = false;
    const response = await setEndpoint(endpoint.url);
    endpoint.checks = true;
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        interactions_endpoint_url: {
          _errors: [
            {
              code: 'APPLICATION_INTERACTIONS_ENDPOINT_URL_INVALID',
              message: 'The specified interactions endpoint url could not be verified.',
            },
          ],
        },
      },
    });
    const app = await hearth.api('/applications/@me', { auth: `Bot ${s.game.botToken}` });
    expect(
      ((await app.json()) as { interactions_endpoint_url: unknown }).interactions_endpoint_url,
    ).toBeNull();
    // The PING it answered was signed correctly; the forged one was not.
    const pings = endpoint.received.filter((r) => r.body['type'] === 1);
    expect(pings.map((r) => r.verified)).toEqual([true, false]);
  });

  it('refuses a URL that does not answer PONG', async () => {
    const response = await setEndpoint('http://127.0.0.1:9/nothing');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: number }).code).toBe(50035);
  });

  it('refuses a URL that is not one', async () => {
    const response = await setEndpoint('not a url');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      code: 50035,
      errors: { interactions_endpoint_url: { _errors: [{ code: 'URL_TYPE_INVALID_URL' }] } },
    });
  });

  it('saves an endpoint that answers the PING with PONG and refuses the bad signature with 401', async () => {
    const before = endpoint.received.length;
    const response = await setEndpoint(endpoint.url);
    expect(response.status).toBe(200);
    expect(
      ((await response.json()) as { interactions_endpoint_url: unknown }).interactions_endpoint_url,
    ).toBe(endpoint.url);
    const sent = endpoint.received.slice(before);
    expect(sent.map((r) => [r.body['type'], r.verified])).toEqual([
      [1, true],
      [1, false],
    ]);
    expect(sent[0]!.body).toMatchObject({ application_id: s.game.id, type: 1, version: 1 });
  });
});

describe('Delivery to the endpoint', () => {
  it('POSTs the interaction signed so that verifyKey accepts it; the answer body is the response', async () => {
    const messageId = await postComponents(hearth, s);
    const user = await connect(hearth, s.member.token);
    endpoint.answer = () => ({ status: 200, body: { type: 4, data: { content: 'Clicked!' } } });
    const response = await click(hearth, s, messageId, 'go', 'n-1');
    expect(response.status).toBe(204);
    const [received] = await endpoint.interactions(1);
    expect(received!.verified).toBe(true);
    const interaction = received!.body;
    expect(interaction).toMatchObject({
      application_id: s.game.id,
      type: 3,
      data: { custom_id: 'go', component_type: 2 },
      guild_id: s.guild.id,
      channel_id: s.channelId,
      channel: { id: s.channelId, type: 0 },
      member: { user: { id: s.member.id } },
      version: 1,
      message: { id: messageId },
      authorizing_integration_owners: { '0': s.guild.id },
      context: 0,
      entitlements: [],
      locale: 'en-US',
      attachment_size_limit: 10 * 1024 * 1024,
    });
    expect(typeof interaction['token']).toBe('string');
    expect(typeof interaction['app_permissions']).toBe('string');
    expect(typeof (interaction['member'] as { permissions: unknown }).permissions).toBe('string');

    // The user hears of it, then of its success, and sees the response in the channel.
    const created = await user.nextDispatch('INTERACTION_CREATE');
    expect(created.d).toEqual({ id: interaction['id'], nonce: 'n-1' });
    const message = await user.nextDispatch('MESSAGE_CREATE');
    expect(message.d).toMatchObject({
      content: 'Clicked!',
      type: 0,
      author: { id: s.game.botUserId },
      webhook_id: s.game.id,
      application_id: s.game.id,
      interaction_metadata: {
        id: interaction['id'],
        type: 3,
        user: { id: s.member.id },
        authorizing_integration_owners: { '0': s.guild.id },
        interacted_message_id: messageId,
      },
      interaction: { id: interaction['id'], type: 3, user: { id: s.member.id } },
    });
    const success = await user.nextDispatch('INTERACTION_SUCCESS');
    expect(success.d).toEqual({ id: interaction['id'], nonce: 'n-1' });
    await user.close();
  });
});
