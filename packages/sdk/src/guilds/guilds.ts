import { ClientResult } from '../client-result.js';
import { attempt, type FeatureContext } from '../feature.js';
import { snowflakeOf } from '../ids.js';

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

/** The lobby a guild channel is linked to (Social SDK `LinkedLobby`). */
export class LinkedLobby {
  readonly #applicationId: bigint;
  readonly #lobbyId: bigint;

  constructor(applicationId: bigint, lobbyId: bigint) {
    this.#applicationId = applicationId;
    this.#lobbyId = lobbyId;
  }

  ApplicationId(): bigint {
    return this.#applicationId;
  }

  LobbyId(): bigint {
    return this.#lobbyId;
  }
}

/** One channel of GetGuildChannels, as Hearth's route answers it. */
export interface WireGuildChannel {
  id: string;
  name: string;
  type: number;
  position: number;
  parent_id: string | null;
  is_linkable: boolean;
  is_viewable_and_writeable_by_all_members: boolean;
  linked_lobby: { application_id: string; lobby_id: string } | null;
}

/**
 * A channel of a guild the player is in, and whether it may be linked to a lobby (seed: GetGuildChannels;
 * Social SDK `GuildChannel`). `Type()` is the platform's channel type number (`ChannelTypes`).
 */
export class GuildChannel {
  readonly #channel: WireGuildChannel;

  /** Made by the library from what the platform sent. @internal */
  constructor(channel: WireGuildChannel) {
    this.#channel = structuredClone(channel);
  }

  Id(): bigint {
    return BigInt(this.#channel.id);
  }

  Name(): string {
    return this.#channel.name;
  }

  Type(): number {
    return this.#channel.type;
  }

  Position(): number {
    return this.#channel.position;
  }

  /** The parent category's id, if any. */
  ParentId(): bigint | undefined {
    return this.#channel.parent_id === null ? undefined : BigInt(this.#channel.parent_id);
  }

  /** A text channel, not age-restricted, linked to no lobby, where the player may manage, see and write. */
  IsLinkable(): boolean {
    return this.#channel.is_linkable;
  }

  /** False when some member or role may not read or write it: linking exposes it to every lobby member. */
  IsViewableAndWriteableByAllMembers(): boolean {
    return this.#channel.is_viewable_and_writeable_by_all_members;
  }

  LinkedLobby(): LinkedLobby | undefined {
    const linked = this.#channel.linked_lobby;
    return linked ? new LinkedLobby(BigInt(linked.application_id), BigInt(linked.lobby_id)) : undefined;
  }
}

export type GetUserGuildsCallback = (result: ClientResult, guilds: GuildMinimal[]) => void;
export type GetGuildChannelsCallback = (result: ClientResult, channels: GuildChannel[]) => void;

/** The player's guilds and their channels (the `guilds` scope, which sdk.social_layer includes). */
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

  /** The guild's channels the player can see, in the order the platform's client shows them. */
  async getGuildChannels(
    guildId: bigint | string,
  ): Promise<{ result: ClientResult; channels: GuildChannel[] }> {
    const id = snowflakeOf(guildId, 'guildId');
    if (id instanceof ClientResult) return { result: id, channels: [] };
    const { result, body } = await attempt(this.#feature, {
      method: 'GET',
      path: `/users/@me/guilds/${id}/channels`,
      route: 'GET /users/@me/guilds/:id/channels',
    });
    const rows = (body as WireGuildChannel[] | undefined) ?? [];
    return { result, channels: rows.map((row) => new GuildChannel(row)) };
  }
}
