import { LobbyMemberFlags } from '@hearth/protocol';

/** A lobby member as the platform sends it (PROTOCOL.md §A.2). */
export interface WireLobbyMember {
  id: string;
  metadata: Record<string, string> | null;
  flags: number;
  additional_name?: string;
  connected?: boolean;
}

/** A lobby as the platform sends it (PROTOCOL.md §A.1, §A.6). */
export interface WireLobby {
  id: string;
  application_id: string;
  metadata: Record<string, string> | null;
  members: WireLobbyMember[];
  flags: number;
  /** The guild channel linked to the lobby (PROTOCOL.md §A.1), when there is one. */
  linked_channel?: { id: string; name: string; guild_id: string };
}

/** The guild channel a lobby is linked to (Social SDK `LinkedChannel`). */
export class LinkedChannel {
  readonly #id: bigint;
  readonly #name: string;
  readonly #guildId: bigint;

  /** Made by the library from what the platform sent. @internal */
  constructor(channel: { id: string; name: string; guild_id: string }) {
    this.#id = BigInt(channel.id);
    this.#name = channel.name;
    this.#guildId = BigInt(channel.guild_id);
  }

  Id(): bigint {
    return this.#id;
  }

  Name(): string {
    return this.#name;
  }

  /** The guild (server) that owns the channel. */
  GuildId(): bigint {
    return this.#guildId;
  }
}

/** LobbyMemberHandle: one member of a lobby, as last known. */
export class LobbyMemberHandle {
  readonly #member: WireLobbyMember;

  /** Made by the library from what the platform sent. @internal */
  constructor(member: WireLobbyMember) {
    this.#member = structuredClone(member);
  }

  Id(): bigint {
    return BigInt(this.#member.id);
  }

  /** Member flag `CanLinkLobby`: the member may link a channel to the lobby. */
  CanLinkLobby(): boolean {
    return (this.#member.flags & LobbyMemberFlags.CanLinkLobby) !== 0;
  }

  /** In the lobby's voice call. */
  Connected(): boolean {
    return this.#member.connected === true;
  }

  Metadata(): Record<string, string> {
    return { ...(this.#member.metadata ?? {}) };
  }
}

/** LobbyHandle: a snapshot of a lobby the player is in. */
export class LobbyHandle {
  readonly #lobby: WireLobby;

  /** Made by the library from what the platform sent. @internal */
  constructor(lobby: WireLobby) {
    this.#lobby = structuredClone(lobby);
  }

  Id(): bigint {
    return BigInt(this.#lobby.id);
  }

  Metadata(): Record<string, string> {
    return { ...(this.#lobby.metadata ?? {}) };
  }

  LobbyMemberIds(): bigint[] {
    return this.#lobby.members.map((member) => BigInt(member.id));
  }

  LobbyMembers(): LobbyMemberHandle[] {
    return this.#lobby.members.map((member) => new LobbyMemberHandle(member));
  }

  /** The guild channel linked to the lobby, or undefined when it has none. */
  LinkedChannel(): LinkedChannel | undefined {
    const channel = this.#lobby.linked_channel;
    return channel && new LinkedChannel(channel);
  }

  GetLobbyMemberHandle(memberId: bigint | string): LobbyMemberHandle | undefined {
    const id = String(memberId);
    const member = this.#lobby.members.find((m) => m.id === id);
    return member && new LobbyMemberHandle(member);
  }
}
