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

  GetLobbyMemberHandle(memberId: bigint | string): LobbyMemberHandle | undefined {
    const id = String(memberId);
    const member = this.#lobby.members.find((m) => m.id === id);
    return member && new LobbyMemberHandle(member);
  }
}
