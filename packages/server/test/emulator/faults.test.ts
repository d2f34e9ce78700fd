import { GatewayOpcodes } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { type EmulatorHearth, startEmulator } from './support.js';

const PROPERTIES = { os: 'linux', browser: 'hearth-tests', device: 'hearth-tests' };
/** GUILDS | GUILD_MESSAGES. */
const INTENTS = 1 | (1 << 9);
let hearth: EmulatorHearth;
let seeded: {
  applications: { game: { id: string; bot_token: string; bot_user_id: string } };
  users: { alice: { id: string; token: string }; bob: { id: string; token: string } };
  guilds: { home: { id: string; channels: { general: string } } };
};

beforeAll(async () => {
  hearth = await startEmulator(new ManualClock('2026-04-01T00:00:00.000Z'));
  seeded = await hearth.adminJson('POST', '/seed', {
    applications: { game: { name: 'Faulty Game' } },
    users: { alice: { username: 'alice' }, bob: { username: 'bob' } },
    guilds: {
      home: {
        name: 'Home',
        owner: 'alice',
        members: ['bob'],
        channels: { general: { name: 'general' } },
        bots: [{ application: 'game', permissions: '3072' }],
      },
    },
  });
});
afterAll(async () => {
  await hearth.close();
});
beforeEach(async () => {
  await hearth.admin('DELETE', '/faults');
});

const rule = (body: Record<string, unknown>) => hearth.adminJson<{ id: string }>('POST', '/faults', body);
const me = (token = seeded.users.alice.token) => hearth.api('/users/@me', { auth: token });

describe('README, Fault injection: HTTP', () => {
  it("answers a route's 429 with the platform's headers and body, once", async () => {
    const created = await rule({
      target: 'http',
      method: 'GET',
      path: '/users/@me',
      action: 'rate_limit',
      retry_after: 2.5,
    });
    const limited = await me();
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({
      message: 'You are being rate limited.',
      retry_after: 2.5,
      global: false,
      code: 0,
    });
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(limited.headers.get('x-ratelimit-scope')).toBe('user');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-reset-after')).toBe('2.500');
    expect(limited.headers.get('x-ratelimit-bucket')).toMatch(/^[0-9a-f]{32}$/);
    expect(limited.headers.get('x-ratelimit-global')).toBeNull();
    expect(
      hearth.logs.some(
        (line) => line.includes('emulator: injected fault') && line.includes(`"fault":"${created.id}"`),
      ),
    ).toBe(true);
    expect((await me()).status).toBe(200);
  });

  it('answers a global 429 with X-RateLimit-Global', async () => {
    await rule({ target: 'http', action: 'rate_limit', retry_after: 1, global: true });
    const limited = await me();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-ratelimit-global')).toBe('true');
    expect(limited.headers.get('x-ratelimit-scope')).toBe('global');
    expect(((await limited.json()) as { global: boolean }).global).toBe(true);
  });

  it('answers 5xx as many times as counted, then lets requests through', async () => {
    await rule({ target: 'http', path: '/users/*', action: 'error', status: 503, count: 2 });
    expect((await me()).status).toBe(503);
    const listed = await hearth.adminJson<{ remaining: number }[]>('GET', '/faults');
    expect(listed).toEqual([
      expect.objectContaining({ action: 'error', status: 503, remaining: 1, expires_at: null }),
    ]);
    expect((await me()).status).toBe(503);
    expect((await me()).status).toBe(200);
    expect(await hearth.adminJson('GET', '/faults')).toEqual([]);
  });

  it('a rule with a duration ends when the test clock passes it', async () => {
    await rule({ target: 'http', path: '/users/@me', action: 'error', status: 502, duration: '10m' });
    expect((await me()).status).toBe(502);
    expect((await me()).status).toBe(502);
    await hearth.adminJson('POST', '/clock', { advance: '11m' });
    expect((await me()).status).toBe(200);
  });

  it('matches by user: another user is not touched', async () => {
    await rule({ target: 'http', user_id: seeded.users.bob.id, action: 'error', status: 500 });
    expect((await me()).status).toBe(200);
    expect((await me(seeded.users.bob.token)).status).toBe(500);
  });

  it('matches by application, and drops the connection', async () => {
    await rule({ target: 'http', application_id: seeded.applications.game.id, action: 'drop' });
    expect((await me()).status).toBe(200);
    await expect(
      hearth.api('/users/@me', { auth: `Bot ${seeded.applications.game.bot_token}` }),
    ).rejects.toThrow();
  });

  it('delays a request, then serves it', async () => {
    await rule({ target: 'http', path: '/users/@me', action: 'delay', delay_ms: 20 });
    expect((await me()).status).toBe(200);
    expect(hearth.logs.some((line) => line.includes('"action":"delay"'))).toBe(true);
  });

  it('lists and clears rules; refuses a malformed one with the field named', async () => {
    const a = await rule({ target: 'http', action: 'error', status: 500, count: 5, path: '/nowhere' });
    await rule({ target: 'gateway', action: 'drop', event: 'TYPING_START' });
    expect((await hearth.adminJson<unknown[]>('GET', '/faults')).length).toBe(2);
    expect((await hearth.admin('DELETE', `/faults/${a.id}`)).status).toBe(204);
    expect((await hearth.admin('DELETE', `/faults/${a.id}`)).status).toBe(404);
    expect((await hearth.adminJson<unknown[]>('GET', '/faults')).length).toBe(1);
    const bad = await hearth.admin('POST', '/faults', { target: 'http', action: 'delay' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: { delay_ms: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] } },
    });
    const wrong = await hearth.admin('POST', '/faults', { target: 'http', action: 'error', status: 418 });
    expect(wrong.status).toBe(400);
  });
});

describe('README, Fault injection: gateway', () => {
  /** A bot session in the guild; answers the client and the session id. */
  async function connectBot(): Promise<{ client: GatewayClient; sessionId: string }> {
    // One Identify per 5 s (max_concurrency 1) on the test clock, which stands still here: move it.
    await hearth.adminJson('POST', '/clock', { advance: '6s' });
    const client = await GatewayClient.connect(hearth.url);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({
      op: 2,
      d: { token: seeded.applications.game.bot_token, intents: INTENTS, properties: PROPERTIES },
    });
    const ready = await client.nextDispatch('READY');
    await client.nextDispatch('GUILD_CREATE');
    return { client, sessionId: (ready.d as { session_id: string }).session_id };
  }

  const say = (content: string) =>
    hearth.adminJson<{ result: { id: string } }>('POST', '/act/send_message', {
      user_id: seeded.users.alice.id,
      channel_id: seeded.guilds.home.channels.general,
      content,
    });

  async function resume(sessionId: string, seq: number): Promise<GatewayClient> {
    const client = await GatewayClient.connect(hearth.url);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({ op: 6, d: { token: seeded.applications.game.bot_token, session_id: sessionId, seq } });
    return client;
  }

  const lastSeq = (client: GatewayClient) =>
    Math.max(...client.frames.filter((f) => f.op === 0).map((f) => f.s as number));

  it('RECONNECT (op 7) instead of a MESSAGE_CREATE; the resumed session gets it', async () => {
    const { client, sessionId } = await connectBot();
    await rule({ target: 'gateway', session_id: sessionId, event: 'MESSAGE_CREATE', action: 'reconnect' });
    const seq = lastSeq(client);
    const sent = await say('through a reconnect');
    const frame = await client.next((f) => f.op === GatewayOpcodes.Reconnect || f.op === 0);
    expect(frame).toEqual({ op: GatewayOpcodes.Reconnect, d: null, s: null, t: null });
    await client.close(4000);
    const resumed = await resume(sessionId, seq);
    const message = await resumed.nextDispatch('MESSAGE_CREATE');
    expect((message.d as { id: string }).id).toBe(sent.result.id);
    await resumed.nextDispatch('RESUMED');
    await resumed.close();
  });

  it('INVALID_SESSION resumable (op 9 true): the resumed session gets the message', async () => {
    const { client, sessionId } = await connectBot();
    await rule({
      target: 'gateway',
      user_id: seeded.applications.game.bot_user_id,
      action: 'invalid_session',
      resumable: true,
    });
    const seq = lastSeq(client);
    const sent = await say('through an invalid session');
    expect(await client.nextOp(GatewayOpcodes.InvalidSession)).toMatchObject({ d: true });
    await client.close(4000);
    const resumed = await resume(sessionId, seq);
    expect(((await resumed.nextDispatch('MESSAGE_CREATE')).d as { id: string }).id).toBe(sent.result.id);
    await resumed.close();
  });

  it('INVALID_SESSION not resumable (op 9 false) ends the session', async () => {
    const { client, sessionId } = await connectBot();
    await rule({ target: 'gateway', session_id: sessionId, action: 'invalid_session', resumable: false });
    const seq = lastSeq(client);
    await say('ends the session');
    expect(await client.nextOp(GatewayOpcodes.InvalidSession)).toMatchObject({ d: false });
    await client.close(1000);
    const again = await resume(sessionId, seq);
    expect(await again.nextOp(GatewayOpcodes.InvalidSession)).toMatchObject({ d: false });
    await again.close();
  });

  it('closes with a chosen code, drops a dispatch, delays one', async () => {
    const { client, sessionId } = await connectBot();
    await rule({ target: 'gateway', session_id: sessionId, action: 'drop', event: 'MESSAGE_CREATE' });
    await say('dropped');
    const kept = await say('kept');
    const next = await client.nextDispatch('MESSAGE_CREATE');
    expect((next.d as { id: string }).id).toBe(kept.result.id);

    await rule({ target: 'gateway', session_id: sessionId, action: 'delay', delay_ms: 10 });
    const late = await say('late');
    expect(((await client.nextDispatch('MESSAGE_CREATE')).d as { id: string }).id).toBe(late.result.id);

    await rule({ target: 'gateway', session_id: sessionId, action: 'close', code: 4009 });
    await say('closes');
    expect((await client.waitClose()).code).toBe(4009);
  });
});
