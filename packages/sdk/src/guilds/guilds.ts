import type { ClientResult } from '../client-result.js';
import { attempt, type FeatureContext } from '../feature.js';

/** A guild the player is in, as GetUserGuilds lists it (seed: GuildMinimal). */
export class GuildMinimal {
  readonly #id: bigint;
  readonly #name: string;

  constructor(id: bigint, name: string) {
    this.#id = id;
    this.#name = name;
  }

  Id(): bigint {
    return this.#id;
  }

  Name(): string {
    return this.#name;
  }
}

export type GetUserGuildsCallback = (result: ClientResult, guilds: GuildMinimal[]) => void;

/** The player's guilds through GET /users/@me/guilds (the `guilds` scope, which sdk.social_layer includes). */
export class Guilds {
  readonly #feature: FeatureContext;

  constructor(feature: FeatureContext) {
    this.#feature = feature;
  }

  async getUserGuilds(): Promise<{ result: ClientResult; guilds: GuildMinimal[] }> {
    const { result, body } = await attempt(this.#feature, { method: 'GET', path: '/users/@me/guilds' });
    const rows = (body as Array<{ id: string; name: string }> | undefined) ?? [];
    return { result, guilds: rows.map((row) => new GuildMinimal(BigInt(row.id), row.name)) };
  }
}
