import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { type LobbyPlayer, lobbyPlayer } from '../../../test-support/lobbies.js';
import { createGame, type TestGame } from '../../../test-support/oauth.js';

/**
 * `multipart/form-data` bodies (PROTOCOL.md §A.3: Send Lobby Message and the moderation-metadata routes take
 * json, urlencoded or multipart): text fields, or `payload_json` for the whole body; file parts refused.
 */
describe('multipart/form-data bodies', () => {
  let hearth: TestHearth;
  let game: TestGame;
  let player: LobbyPlayer;
  let lobbyId: string;

  beforeAll(async () => {
    hearth = await startHearth();
    game = await createGame(hearth);
    player = await lobbyPlayer(hearth, game);
    const lobby = await hearth.api('/lobbies', {
      method: 'PUT',
      auth: player.bearer,
      body: { secret: 'mp' },
    });
    lobbyId = ((await lobby.json()) as { id: string }).id;
  });
  afterAll(() => hearth.close());

  const post = (body: FormData | string, headers: Record<string, string> = {}) =>
    hearth.api(`/lobbies/${lobbyId}/messages`, { method: 'POST', auth: player.bearer, body, headers });

  it('reads text fields as the body', async () => {
    const form = new FormData();
    form.set('content', 'sent as a form');
    const response = await post(form);
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ content: 'sent as a form', lobby_id: lobbyId });
  });

  it('reads payload_json as the whole body, metadata included', async () => {
    const form = new FormData();
    form.set('payload_json', JSON.stringify({ content: 'from payload_json', metadata: { k: 'v' } }));
    const response = await post(form);
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ content: 'from payload_json', metadata: { k: 'v' } });
  });

  it('validates a form body like a JSON one', async () => {
    const form = new FormData();
    form.set('content', 'x'.repeat(4001));
    const response = await post(form);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 4000 or fewer in length.' }] },
      },
    });
  });

  it('refuses a file part, a broken payload_json and a body without its boundary', async () => {
    const withFile = new FormData();
    withFile.set('content', 'with a file');
    withFile.set('files[0]', new Blob(['bytes']), 'a.txt');
    const file = await post(withFile);
    expect(file.status).toBe(400);
    expect(await file.json()).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: { 'files[0]': { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } },
    });

    const broken = new FormData();
    broken.set('payload_json', '{"content":');
    const json = await post(broken);
    expect([json.status, await json.json()]).toEqual([
      400,
      { code: 50109, message: 'The request body contains invalid JSON.' },
    ]);

    const truncated = await post('--abc\r\nContent-Disposition: form-data; name="content"\r\n\r\nhi', {
      'content-type': 'multipart/form-data; boundary=abc',
    });
    expect([truncated.status, await truncated.json()]).toEqual([
      400,
      {
        code: 50035,
        message: 'Invalid Form Body',
        errors: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] },
      },
    ]);
    const noBoundary = await post('content=hi', { 'content-type': 'multipart/form-data' });
    expect(noBoundary.status).toBe(400);
  });

  it('takes moderation metadata as a form', async () => {
    const sent = (await (
      await post(JSON.stringify({ content: 'judge me' }), { 'content-type': 'application/json' })
    ).json()) as {
      id: string;
    };
    const form = new FormData();
    form.set('action', 'blur');
    const response = await hearth.api(`/lobbies/${lobbyId}/messages/${sent.id}/moderation-metadata`, {
      method: 'PUT',
      auth: `Bot ${game.botToken}`,
      body: form,
    });
    expect(response.status).toBe(204);
    const history = await hearth.api(`/lobbies/${lobbyId}/messages?limit=1`, { auth: player.bearer });
    expect(
      ((await history.json()) as Array<{ moderation_metadata?: unknown }>)[0]?.moderation_metadata,
    ).toEqual({
      action: 'blur',
    });
  });
});
