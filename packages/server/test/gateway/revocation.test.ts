import { GatewayCloseCodes, GatewayOpcodes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, tokenRequest } from '../../../../test-support/oauth.js';

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
let hearth: TestHearth;

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
});
afterAll(() => hearth.close());

async function playerSession() {
  const game = await createGame(hearth, { publicClient: true });
  const player = await createPlayer(hearth);
  const tokens = await grantTokens(hearth, game, player.token, 'openid sdk.social_layer');
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  const token = `Bearer ${tokens.access_token}`;
  client.send({ op: 2, d: { token, properties: PROPERTIES } });
  const ready = await client.nextDispatch('READY');
  const revoke = () =>
    tokenRequest(
      hearth,
      { token: tokens.access_token, client_id: game.id },
      { path: '/oauth2/token/revoke' },
    );
  return { client, token, sessionId: (ready.d as { session_id: string }).session_id, revoke };
}

describe('revoked authorization on the gateway (seed, States: account link)', () => {
  it('revoking the token closes the live session with 4004 and forgets it', async () => {
    const { client, sessionId, revoke } = await playerSession();
    expect((await revoke()).status).toBe(200);
    expect(await client.closed).toEqual({
      code: GatewayCloseCodes.AuthenticationFailed,
      reason: 'Authorization revoked',
    });
    expect(hearth.gateway.registry.get(sessionId)).toBeUndefined();
  });

  it('a session whose token was revoked while the client was away cannot resume', async () => {
    const { client, token, sessionId, revoke } = await playerSession();
    client.socket.close(4000);
    await client.closed;
    expect((await revoke()).status).toBe(200);
    const again = await GatewayClient.connect(hearth.url);
    await again.nextOp(GatewayOpcodes.Hello);
    again.send({ op: 6, d: { token, session_id: sessionId, seq: 1 } });
    const answer = await Promise.race([again.closed, again.next()]);
    // Revocation already ended the waiting session, so the resume is refused without replaying anything.
    expect(answer).toMatchObject({ op: GatewayOpcodes.InvalidSession, d: false });
  });
});
