import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  authorizationCode,
  consentLocation,
  createGame,
  createPlayer,
  pkcePair,
  type TestGame,
  tokenRequest,
} from '../../../../test-support/oauth.js';

const REDIRECT = 'http://127.0.0.1/callback';
let hearth: TestHearth;
let confidential: TestGame;
let publicGame: TestGame;
let playerToken: string;

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  confidential = await createGame(hearth);
  publicGame = await createGame(hearth, { publicClient: true });
  ({ token: playerToken } = await createPlayer(hearth));
});
afterAll(() => hearth.close());

const invalidCode = { error: 'invalid_grant', error_description: 'Invalid "code" in request.' };

function redeem(code: string, game: TestGame, extra: Record<string, string> = {}): Promise<Response> {
  return tokenRequest(hearth, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    client_id: game.id,
    ...extra,
  });
}

async function expectInvalidCode(response: Response): Promise<void> {
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual(invalidCode);
}

describe('RFC 7636 Proof Key for Code Exchange', () => {
  it('§4.6 a public client redeems its code with the verifier alone, no secret', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await authorizationCode(hearth, publicGame, playerToken, {
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const response = await redeem(code, publicGame, { code_verifier: verifier });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { token_type: string }).token_type).toBe('Bearer');
  });

  it('§4.6 a confidential client redeems with the verifier and its secret', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await authorizationCode(hearth, confidential, playerToken, {
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const response = await redeem(code, confidential, {
      code_verifier: verifier,
      client_secret: confidential.clientSecret,
    });
    expect(response.status).toBe(200);
  });

  it('§4.6 a wrong verifier is invalid_grant, and does not spend the code', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await authorizationCode(hearth, publicGame, playerToken, {
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    await expectInvalidCode(await redeem(code, publicGame, { code_verifier: pkcePair().verifier }));
    expect((await redeem(code, publicGame, { code_verifier: verifier })).status).toBe(200);
  });

  it('§4.6 a code issued with a challenge is refused without a verifier', async () => {
    const { challenge } = pkcePair();
    const code = await authorizationCode(hearth, confidential, playerToken, {
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    await expectInvalidCode(await redeem(code, confidential, { client_secret: confidential.clientSecret }));
  });

  it('a verifier sent for a code issued without a challenge is refused (downgrade)', async () => {
    const code = await authorizationCode(hearth, confidential, playerToken);
    await expectInvalidCode(
      await redeem(code, confidential, {
        client_secret: confidential.clientSecret,
        code_verifier: pkcePair().verifier,
      }),
    );
  });

  it('a public client without PKCE cannot redeem a code (no secret to prove itself)', async () => {
    const code = await authorizationCode(hearth, publicGame, playerToken);
    const response = await redeem(code, publicGame);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'invalid_client' });
  });

  it.each([
    ['too short (42 characters)', 'a'.repeat(42)],
    ['too long (129 characters)', 'a'.repeat(129)],
    ['outside the unreserved set', `${'a'.repeat(50)}+/=`],
  ])('§4.1 a verifier %s is refused even when its digest matches', async (_, verifier) => {
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const code = await authorizationCode(hearth, publicGame, playerToken, {
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    await expectInvalidCode(await redeem(code, publicGame, { code_verifier: verifier }));
  });

  it.each([
    [
      'the plain method',
      { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' },
      'code_challenge_method must be S256',
    ],
    [
      'a challenge without a method (plain by default)',
      { code_challenge: 'a'.repeat(43) },
      'code_challenge_method must be S256',
    ],
    [
      'a method without a challenge',
      { code_challenge_method: 'S256' },
      'code_challenge must be a base64url SHA-256 digest',
    ],
    [
      'a malformed challenge',
      { code_challenge: 'short', code_challenge_method: 'S256' },
      'code_challenge must be a base64url SHA-256 digest',
    ],
  ])('§4.4.1 %s is refused at the authorization endpoint', async (_, params, description) => {
    const location = await consentLocation(hearth, playerToken, {
      client_id: publicGame.id,
      response_type: 'code',
      scope: 'identify',
      redirect_uri: REDIRECT,
      state: 'st',
      ...params,
    });
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'invalid_request',
      error_description: description,
      state: 'st',
    });
  });
});
