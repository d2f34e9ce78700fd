import type { MemberRow } from './store.js';

/** A lobby's members as read at one `members_version`: shared, never to be changed. */
export interface MemberList {
  readonly version: number;
  readonly rows: readonly MemberRow[];
  readonly userIds: readonly string[];
  readonly byUser: ReadonlyMap<string, MemberRow>;
}

/**
 * The member lists this node read last, each under the lobby's `members_version` (migration 0038): the
 * database bumps it on every change to a member row, whoever makes it (another node, a CLI process, a
 * cascade), so a list is reused only while the lobby row read in the same transaction shows its version.
 */
export class MemberLists {
  readonly #lists = new Map<string, MemberList>();
  readonly #capacity: number;

  constructor(capacity = 1024) {
    this.#capacity = capacity;
  }

  /** The list of `lobbyId` at exactly `version`, if this node holds it. */
  get(lobbyId: string, version: number): MemberList | undefined {
    const list = this.#lists.get(lobbyId);
    return list?.version === version ? list : undefined;
  }

  set(lobbyId: string, version: number, rows: readonly MemberRow[]): MemberList {
    const list: MemberList = {
      version,
      rows,
      userIds: rows.map((row) => row.user_id),
      byUser: new Map(rows.map((row) => [row.user_id, row])),
    };
    this.#lists.delete(lobbyId);
    // Oldest insertion out first: a busy lobby is set again whenever its members change.
    if (this.#lists.size >= this.#capacity) this.#lists.delete(this.#lists.keys().next().value as string);
    this.#lists.set(lobbyId, list);
    return list;
  }

  forget(lobbyId: string): void {
    this.#lists.delete(lobbyId);
  }
}
