import { type AccountLinkParticipant, ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conformance } from '../../../../test-support/conformance.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  authorizationCode,
  createGame,
  createPlayer,
  type TestGame,
  tokenRequest,
} from '../../../../test-support/oauth.js';

/**
 * The seam through which merge, unmerge and ban move other domains' data (lobby memberships, friends, DM
 * history): each participant runs inside the operation's transaction, and a failing one undoes it all.
 */

type Call = [string, string, string, string];
const calls: Call[] = [];
let failNext = false;

const recorder: AccountLinkParticipant = {
  name: 'recorder',
  async mergeInto(tx, provisionalUserId, fullUserId, applicationId) {
    // Inside the transaction: both accounts are still there, read through `tx`.
    const rows = await tx
      .selectFrom('users')
      .select('id')
      .where('id', 'in', [provisionalUserId, fullUserId])
      .execute();
    expect(rows).toHaveLength(2);
    calls.push(['merge', provisionalUserId, fullUserId, applicationId]);
    if (failNext) {
      failNext = false;
      throw new Error('participant failed');
    }
  },
  async unmergeInto(tx, fullUserId, newProvisionalUserId, applicationId) {
    const created = await tx
      .selectFrom('users')
      .select('provisional')
      .where('id', '=', newProvisionalUserId)
      .executeTakeFirst();
    expect(created?.provisional).toBe(1);
    calls.push(['unmerge', fullUserId, newProvisionalUserId, applicationId]);
  },
};

const clock = new ManualClock(Date.now());
let hearth: TestHearth;
let game: TestGame;

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock, { accountLinkParticipants: [recorder] });
  game = await createGame(hearth);
  await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['ProvisionalAccountsEnabled'] });
});
afterAll(() => hearth.close());

async function provisional(externalUserId: string): Promise<{ token: string; userId: string }> {
  const response = await hearth.api('/partner-sdk/token/bot', {
    method: 'POST',
    auth: `Bot ${game.botToken}`,
    body: { external_user_id: externalUserId },
  });
  const { access_token } = (await response.json()) as { access_token: string };
  const me = (await (await hearth.api('/users/@me', { auth: `Bearer ${access_token}` })).json()) as {
    id: string;
  };
  return { token: access_token, userId: me.id };
}

async function merge(playerToken: string, token: string, code?: string) {
  return tokenRequest(hearth, {
    grant_type: 'authorization_code',
    code: code ?? (await authorizationCode(hearth, game, playerToken, { scope: 'openid sdk.social_layer' })),
    redirect_uri: 'http://127.0.0.1/callback',
    client_id: game.id,
    client_secret: game.clientSecret,
    external_auth_type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN',
    external_auth_token: token,
  });
}

describe('AccountLinkParticipant (the merge/unmerge seam)', () => {
  it('a failing participant undoes the merge: the code, the provisional account and its token survive', async () => {
    const source = await provisional('seam-1');
    const player = await createPlayer(hearth);
    const code = await authorizationCode(hearth, game, player.token, { scope: 'openid sdk.social_layer' });
    failNext = true;
    conformance.expectServerError(
      'POST',
      '/oauth2/token',
      'a participant that throws is a bug of the embedder',
    );
    const failed = await merge(player.token, source.token, code);
    expect(failed.status).toBe(500);
    expect(calls).toEqual([['merge', source.userId, player.user.id, game.id]]);
    expect((await hearth.api('/users/@me', { auth: `Bearer ${source.token}` })).status).toBe(200);
    expect(await hearth.services.accounts.isProvisional(source.userId)).toBe(true);
    // Nothing was spent: the same code merges once the participant succeeds.
    expect((await merge(player.token, source.token, code)).status).toBe(200);
    expect(await hearth.services.accounts.isProvisional(source.userId)).toBe(false);
  });

  it('unmerge and ban call unmergeInto with the new provisional account', async () => {
    calls.length = 0;
    const source = await provisional('seam-2');
    const player = await createPlayer(hearth);
    expect((await merge(player.token, source.token)).status).toBe(200);
    const unmerged = await hearth.api('/partner-sdk/provisional-accounts/unmerge/bot', {
      method: 'POST',
      auth: `Bot ${game.botToken}`,
      body: { external_user_id: 'seam-2' },
    });
    expect(unmerged.status).toBe(204);
    const reborn = await provisional('seam-2');
    expect(calls).toEqual([
      ['merge', source.userId, player.user.id, game.id],
      ['unmerge', player.user.id, reborn.userId, game.id],
    ]);
    expect((await merge(player.token, reborn.token)).status).toBe(200);
    await hearth.services.accountLink.ban(player.user.id, {});
    const restricted = await provisional('seam-2');
    expect(calls.at(-1)).toEqual(['unmerge', player.user.id, restricted.userId, game.id]);
  });
});
