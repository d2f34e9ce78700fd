import { AuthorizationTokenType, ErrorType, GuildMinimal, sdkpp } from '@hearth/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGuild } from '../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { createGame, grantTokens } from '../../../test-support/oauth.js';

/** Client::GetUserGuilds (seed: GuildMinimal) against a live server. */
describe('Client.GetUserGuilds', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth();
  });
  afterAll(() => hearth.close());

  async function clientWith(scope: string) {
    const guild = await createTestGuild(hearth, 'SDK Hall');
    const game = await createGame(hearth);
    const tokens = await grantTokens(hearth, game, guild.owner.token, scope);
    const client = new sdkpp.Client(`${hearth.url}/api`, hearth.url);
    client.SetApplicationId(game.id);
    await client.UpdateToken(AuthorizationTokenType.Bearer, tokens.access_token);
    return { client, guild };
  }

  it('answers the player guilds as GuildMinimal handles (Id, Name), through the callback and the Promise', async () => {
    const { client, guild } = await clientWith('identify guilds');
    const called = new Promise<GuildMinimal[]>((resolve) =>
      client.GetUserGuilds((result, guilds) => {
        expect(result.Successful()).toBe(true);
        resolve(guilds);
      }),
    );
    const guilds = await called;
    expect(guilds).toHaveLength(1);
    expect(guilds[0]).toBeInstanceOf(GuildMinimal);
    expect(guilds[0]!.Id()).toBe(BigInt(guild.id));
    expect(guilds[0]!.Name()).toBe('SDK Hall');
  });

  it('without the guilds scope: an HTTP error result and no guilds', async () => {
    const { client } = await clientWith('identify');
    const { result, guilds } = await client.GetUserGuilds();
    expect(result.Successful()).toBe(false);
    expect(result.Type()).toBe(ErrorType.HTTPError);
    expect(guilds).toEqual([]);
  });
});
