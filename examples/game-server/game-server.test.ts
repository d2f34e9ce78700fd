import { startHearth, type TestingHearth, waitForGatewayEvent } from '@hearth/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GameServer, say } from './game-server.js';

/** The game server example against the Hearth emulator: provisional accounts, a match lobby, its chat. */

let hearth: TestingHearth;
let game: GameServer;

beforeAll(async () => {
  hearth = await startHearth({
    fixture: { applications: { game: { name: 'Arena', flags: ['ProvisionalAccountsEnabled'] } } },
  });
  game = new GameServer(hearth.url, hearth.seeded.applications['game']?.bot_token ?? '');
  // Starting a server and logging a client in takes longer on a loaded CI machine than the default hook time.
}, 120_000);
afterAll(async () => {
  await hearth.close();
});

describe('examples/game-server', () => {
  it('signs players in with provisional accounts: the same game id finds the same account', async () => {
    const first = await game.signIn('player-1', 'Ada');
    const again = await game.signIn('player-1', 'Ada');
    const other = await game.signIn('player-2', 'Bo');
    expect(again.userId).toBe(first.userId);
    expect(other.userId).not.toBe(first.userId);
  });

  it('opens a match lobby whose chat reaches the other player on the gateway', async () => {
    const ada = await game.signIn('player-1', 'Ada');
    const bo = await game.signIn('player-2', 'Bo');
    const lobbyId = await game.openMatch([ada, bo], 'duel');
    expect((await game.match(lobbyId))?.members.map((m) => m.id).sort()).toEqual(
      [ada.userId, bo.userId].sort(),
    );

    // Bo's game client: connected to the gateway with Bo's token.
    const boClient = await hearth.gateway(`Bearer ${bo.accessToken}`, 0);
    const sent = await say(hearth.url, ada, lobbyId, 'gl hf');
    const received = await waitForGatewayEvent<{ id: string; content: string; lobby_id: string }>(
      boClient,
      'LOBBY_MESSAGE_CREATE',
    );
    expect(received).toMatchObject({ id: sent.id, content: 'gl hf', lobby_id: lobbyId });
    boClient.close();
    await game.closeMatch(lobbyId);
    expect(await game.match(lobbyId)).toBeUndefined();
  });

  it('an idle match lobby goes once the clock passes its idle timeout', async () => {
    const cy = await game.signIn('player-3', 'Cy');
    const lobbyId = await game.openMatch([cy], 'solo', 60);
    await hearth.advanceClock('30s');
    expect(await game.match(lobbyId)).toBeDefined();
    await hearth.advanceClock('2m');
    expect(await game.match(lobbyId)).toBeUndefined();
  });
});
