/**
 * One call's DAVE group as its delivery service sees it (protocol.md, Group Key Exchange): the epoch, the
 * leaf of each member, the external proposals sent in this epoch with their refs, the transition under way
 * and, in mixed calls before E2EE is required, the protocol version (Initial Transitory Phase).
 */
import {
  DAVE_INIT_TRANSITION_ID,
  DAVE_NEW_GROUP_EPOCH,
  DAVE_PROTOCOL_VERSION,
  DaveProposalsOperation,
  VoiceOpcodes,
} from '@hearth/protocol';
import type { KeyPackage } from 'ts-mls';
import {
  bytesEqual,
  type DaveExternalSender,
  hex,
  parseCommitWelcome,
  proposalsPayload,
  snowflakeBytes,
  validateKeyPackage,
  welcomeFor,
} from './mls.js';

/** What the voice session gives the delivery service for each member: its user and its socket. */
export interface DaveMemberLink {
  readonly userId: string;
  sendJson(op: number, d: Record<string, unknown>): void;
  /** A binary server frame; the session prefixes its sequence number. */
  sendBinary(op: number, payload: Uint8Array): void;
}

/** Why the gateway dropped a DAVE message instead of acting on it; counted for tests and logs. */
export type DaveRejection =
  | 'key_package_invalid'
  | 'key_package_early'
  | 'key_package_from_member'
  | 'commit_malformed'
  | 'commit_wrong_epoch'
  | 'commit_wrong_sender'
  | 'commit_proposals'
  | 'commit_welcome'
  | 'not_e2ee';

interface Member {
  link: DaveMemberLink;
  maxVersion: number;
  /** op 4 went out: the member knows the call's version and, when 1, has our external sender. */
  described: boolean;
  keyPackage: { value: KeyPackage; ref: Uint8Array } | undefined;
  /** Flagged an invalid commit or welcome (op 31): a Remove is in flight and it is pending again. */
  recovering: boolean;
}

interface SentProposal {
  refHex: string;
  ref: Uint8Array;
  kind: 'add' | 'remove';
  userId: string;
  leaf: number | undefined;
  recipients: Set<string>;
  revoked: boolean;
  message: Uint8Array;
}

interface Transition {
  id: number;
  waiting: Set<string>;
  notified: Set<string>;
  deadline: number;
}

interface AcceptedCommit {
  commit: Uint8Array;
  /** The proposals in the commit's order, which decides the leaves the Adds take. */
  ordered: SentProposal[];
  /** Each joiner's own part of the Welcome. */
  welcomes: Map<string, Uint8Array>;
}

const MAX_TRANSITION_ID = 0xffff;

export class DaveCall {
  readonly channelId: string;
  readonly #sender: DaveExternalSender;
  readonly #groupId: Uint8Array;
  readonly #members = new Map<string, Member>();
  #version = 0;
  /** The established group's epoch; 0 while no group exists (every member pending). */
  #epoch = 0n;
  #leaves: (string | undefined)[] = [];
  #proposals: SentProposal[] = [];
  #transition: Transition | undefined;
  #lastTransitionId = 0;
  readonly rejections: DaveRejection[] = [];
  /** Told of each epoch a commit starts (metrics). */
  readonly #onEpoch: () => void;

  constructor(channelId: string, sender: DaveExternalSender, onEpoch: () => void = () => {}) {
    this.channelId = channelId;
    this.#sender = sender;
    this.#onEpoch = onEpoch;
    this.#groupId = snowflakeBytes(channelId);
  }

  get version(): number {
    return this.#version;
  }

  get epoch(): bigint {
    return this.#epoch;
  }

  get empty(): boolean {
    return this.#members.size === 0;
  }

  /** The user in each leaf of the server's view of the tree (undefined: blank leaf). */
  get leaves(): readonly (string | undefined)[] {
    return this.#leaves;
  }

  /**
   * A member identified: the call runs DAVE only while every member offers it (Initial Transitory Phase), so a
   * member without DAVE downgrades it. Returns the `dave_protocol_version` of its session description.
   */
  join(
    link: DaveMemberLink,
    maxVersion: number,
    now: number,
    timeoutMs: number,
  ): { version: number; replaced: boolean } {
    const previous = this.#members.get(link.userId);
    if (previous?.link === link) return { version: this.#version, replaced: false };
    this.#members.set(link.userId, {
      link,
      maxVersion,
      described: false,
      keyPackage: undefined,
      recovering: false,
    });
    if (this.#members.size === 1) this.#version = maxVersion > 0 ? DAVE_PROTOCOL_VERSION : 0;
    else if (maxVersion === 0 && this.#version > 0) this.#downgrade(now, timeoutMs);
    // The user's previous session is gone with its keys: its leaf must be removed before it is added again.
    const replaced = previous !== undefined && this.#leafOf(link.userId) !== undefined;
    return { version: this.#version, replaced };
  }

  /** Op 4 reached the member: with DAVE on it now needs the external sender (op 25) to build its pending group. */
  described(userId: string): void {
    const member = this.#members.get(userId);
    if (member === undefined) return;
    member.described = true;
    if (this.#version > 0) member.link.sendBinary(VoiceOpcodes.DaveMlsExternalSender, this.#sender.package);
  }

  async keyPackage(userId: string, bytes: Uint8Array): Promise<void> {
    const member = this.#members.get(userId);
    if (member === undefined) return;
    // Before op 4 the member cannot have our external sender, so it could not process the Adds in flight;
    // a member of the group sends none unless it asked to be re-added (op 31).
    let refused: DaveRejection | undefined;
    if (this.#version === 0) refused = 'not_e2ee';
    else if (!member.described) refused = 'key_package_early';
    else if (this.#leafOf(userId) !== undefined && !member.recovering) refused = 'key_package_from_member';
    const check = refused === undefined ? await validateKeyPackage(bytes, userId) : undefined;
    if (check === undefined || !check.ok) {
      this.#reject(refused ?? 'key_package_invalid');
      return;
    }
    // A pending member may replace its key package but never use two (protocol.md, Key Packages).
    this.#revoke((proposal) => proposal.kind === 'add' && proposal.userId === userId);
    member.keyPackage = { value: check.keyPackage, ref: check.ref };
    const add = await this.#propose(
      { proposalType: 'add', add: { keyPackage: check.keyPackage } },
      'add',
      userId,
    );
    if (this.#epoch > 0n) {
      this.#send(add, this.#groupRecipients());
      return;
    }
    // No group yet: every other pending member gets this Add, and this one gets the Adds already in flight.
    this.#send(add, this.#pendingRecipients(userId));
    const inFlight = this.#proposals.filter((p) => !p.revoked && p.kind === 'add' && p.userId !== userId);
    if (inFlight.length > 0) {
      for (const proposal of inFlight) proposal.recipients.add(userId);
      member.link.sendBinary(
        VoiceOpcodes.DaveMlsProposals,
        proposalsPayload(
          DaveProposalsOperation.Append,
          inFlight.map((p) => p.message),
        ),
      );
    }
  }

  /** Op 28: the first valid commit of the epoch wins and is announced; any other is dropped. */
  commitWelcome(userId: string, bytes: Uint8Array, now: number, timeoutMs: number): void {
    if (!this.#members.has(userId)) return;
    const checked = this.#checkCommit(userId, bytes);
    if (typeof checked === 'string') this.#reject(checked);
    else this.#announce(userId, checked, now, timeoutMs);
  }

  /** protocol.md, Voice Gateway Commit Validity; returns why the commit is refused, or what it does. */
  #checkCommit(userId: string, bytes: Uint8Array): DaveRejection | AcceptedCommit {
    if (this.#version === 0) return 'not_e2ee';
    const parsed = parseCommitWelcome(bytes);
    if (parsed === undefined || !bytesEqual(parsed.groupId, this.#groupId)) return 'commit_malformed';
    if (parsed.epoch !== this.#epoch) return 'commit_wrong_epoch';
    const senderLeaf = this.#epoch > 0n ? this.#leafOf(userId) : 0;
    if (senderLeaf !== parsed.senderLeaf || this.#members.get(userId)?.recovering)
      return 'commit_wrong_sender';
    // It may not change the committer's credential.
    if (parsed.pathIdentity !== undefined && !bytesEqual(parsed.pathIdentity, snowflakeBytes(userId))) {
      return 'commit_wrong_sender';
    }
    // It names, by ref only, every unrevoked proposal this committer was sent, and nothing else.
    const expected = this.#proposals.filter((p) => !p.revoked && p.recipients.has(userId));
    const named = new Set(parsed.refs.map(hex));
    if (
      parsed.inline > 0 ||
      expected.length === 0 ||
      named.size !== parsed.refs.length ||
      named.size !== expected.length ||
      !expected.every((p) => named.has(p.refHex))
    ) {
      return 'commit_proposals';
    }
    const ordered = parsed.refs.map((ref) => expected.find((p) => p.refHex === hex(ref)) as SentProposal);
    const adds = ordered.filter((p) => p.kind === 'add');
    if (adds.length === 0 && parsed.welcome !== undefined) return 'commit_welcome';
    const welcomes = new Map<string, Uint8Array>();
    for (const add of adds) {
      const keyPackage = this.#members.get(add.userId)?.keyPackage;
      const part = keyPackage && parsed.welcome ? welcomeFor(parsed.welcome, keyPackage.ref) : undefined;
      if (part === undefined) return 'commit_welcome';
      welcomes.set(add.userId, part);
    }
    return { commit: parsed.commit, ordered, welcomes };
  }

  /** Op 29 to the old group's remaining members, op 30 to each joiner, and the transition that follows. */
  #announce(userId: string, accepted: AcceptedCommit, now: number, timeoutMs: number): void {
    const established = this.#epoch > 0n;
    this.#executeTransition();
    const transitionId = this.#nextTransitionId();
    const removed = new Set(accepted.ordered.filter((p) => p.kind === 'remove').map((p) => p.userId));
    // Members of the old group that stay see the commit; a new group's only old member is its committer.
    const announced = established ? this.#groupRecipients().filter((id) => !removed.has(id)) : [userId];
    const announce = Buffer.concat([u16(transitionId), accepted.commit]);
    for (const id of announced) {
      this.#members.get(id)?.link.sendBinary(VoiceOpcodes.DaveMlsAnnounceCommitTransition, announce);
    }
    for (const [id, welcome] of accepted.welcomes) {
      const payload = Buffer.concat([u16(transitionId), welcome]);
      this.#members.get(id)?.link.sendBinary(VoiceOpcodes.DaveMlsWelcome, payload);
    }
    this.#applyCommit(established ? undefined : userId, accepted.ordered);
    this.#epoch = established ? this.#epoch + 1n : 1n;
    this.#onEpoch();
    this.#proposals = [];
    this.#transition = {
      id: transitionId,
      waiting: new Set(this.#leaves.filter((id): id is string => id !== undefined && this.#members.has(id))),
      notified: new Set([...announced, ...accepted.welcomes.keys()]),
      deadline: now + timeoutMs,
    };
  }

  /** Op 23: when every member of the new epoch is ready, op 22 tells them all to switch. */
  transitionReady(userId: string, transitionId: number): void {
    const transition = this.#transition;
    if (transition === undefined || transition.id !== transitionId) return;
    transition.waiting.delete(userId);
    if (transition.waiting.size === 0) this.#executeTransition();
  }

  /** Op 31 (Recovery from Invalid Commit or Welcome): propose removing the member; its next key package re-adds it. */
  async invalidCommitWelcome(userId: string): Promise<void> {
    const member = this.#members.get(userId);
    if (member === undefined || this.#version === 0) return;
    this.#transition?.waiting.delete(userId);
    member.keyPackage = undefined;
    this.#revoke((proposal) => proposal.kind === 'add' && proposal.userId === userId);
    const leaf = this.#leafOf(userId);
    if (leaf === undefined || member.recovering) return;
    member.recovering = true;
    const recipients = this.#groupRecipients();
    if (recipients.length === 0) return;
    const remove = await this.#propose(
      { proposalType: 'remove', remove: { removed: leaf } },
      'remove',
      userId,
      leaf,
    );
    this.#send(remove, recipients);
  }

  async leave(link: DaveMemberLink): Promise<void> {
    const userId = link.userId;
    const member = this.#members.get(userId);
    // A newer session of the same user may have joined already; that one stays.
    if (member === undefined || member.link !== link) return;
    this.#members.delete(userId);
    this.#revoke((proposal) => proposal.kind === 'add' && proposal.userId === userId);
    if (this.#transition?.waiting.delete(userId) && this.#transition.waiting.size === 0)
      this.#executeTransition();
    if (this.#members.size === 0) return;
    if (this.#version === 0) {
      if ([...this.#members.values()].every((m) => m.maxVersion > 0)) this.#upgrade();
      return;
    }
    const leaf = this.#leafOf(userId);
    if (leaf === undefined || this.#epoch === 0n) return;
    const remaining = this.#groupRecipients();
    if (remaining.length <= 1) {
      this.#soleMemberReset();
      return;
    }
    if (member.recovering) return;
    const remove = await this.#propose(
      { proposalType: 'remove', remove: { removed: leaf } },
      'remove',
      userId,
      leaf,
    );
    this.#send(remove, this.#groupRecipients());
  }

  /** Op 22 for a transition whose members did not all answer in time. */
  expire(now: number): void {
    if (this.#transition !== undefined && this.#transition.deadline <= now) this.#executeTransition();
  }

  #applyCommit(creator: string | undefined, ordered: SentProposal[]): void {
    if (creator !== undefined) this.#leaves = [creator];
    // RFC 9420 §12.3: removals first, then each Add takes the leftmost blank leaf.
    for (const proposal of ordered) {
      if (proposal.kind === 'remove' && proposal.leaf !== undefined) this.#leaves[proposal.leaf] = undefined;
    }
    for (const proposal of ordered) {
      if (proposal.kind !== 'add') continue;
      const blank = this.#leaves.indexOf(undefined);
      this.#leaves[blank === -1 ? this.#leaves.length : blank] = proposal.userId;
      const member = this.#members.get(proposal.userId);
      if (member !== undefined) {
        member.keyPackage = undefined;
        member.recovering = false;
      }
    }
    while (this.#leaves.length > 0 && this.#leaves[this.#leaves.length - 1] === undefined) this.#leaves.pop();
  }

  /** protocol.md, Sole member reset: no single member keeps control of a group; everyone starts a new one. */
  #soleMemberReset(): void {
    this.#executeTransition();
    this.#resetGroup();
    for (const member of this.#members.values()) {
      if (!member.described) continue;
      member.link.sendJson(VoiceOpcodes.DavePrepareEpoch, {
        protocol_version: this.#version,
        epoch: DAVE_NEW_GROUP_EPOCH,
      });
      member.link.sendJson(VoiceOpcodes.DavePrepareTransition, {
        protocol_version: this.#version,
        transition_id: DAVE_INIT_TRANSITION_ID,
      });
    }
  }

  /** A member without DAVE joined: everyone moves to transport-only encryption (Downgrade to Transport-Only). */
  #downgrade(now: number, timeoutMs: number): void {
    this.#executeTransition();
    this.#resetGroup();
    this.#version = 0;
    const id = this.#nextTransitionId();
    const daveMembers = [...this.#members.values()].filter((m) => m.described && m.maxVersion > 0);
    for (const member of daveMembers) {
      member.link.sendJson(VoiceOpcodes.DavePrepareTransition, { protocol_version: 0, transition_id: id });
    }
    const ids = daveMembers.map((m) => m.link.userId);
    this.#transition = { id, waiting: new Set(ids), notified: new Set(ids), deadline: now + timeoutMs };
    if (ids.length === 0) this.#transition = undefined;
  }

  /** The last member without DAVE left: a new group is created for the members (Upgrade from Transport-Only). */
  #upgrade(): void {
    this.#executeTransition();
    this.#resetGroup();
    this.#version = DAVE_PROTOCOL_VERSION;
    for (const member of this.#members.values()) {
      if (!member.described) continue;
      member.link.sendJson(VoiceOpcodes.DavePrepareEpoch, {
        protocol_version: this.#version,
        epoch: DAVE_NEW_GROUP_EPOCH,
      });
      member.link.sendBinary(VoiceOpcodes.DaveMlsExternalSender, this.#sender.package);
    }
  }

  #resetGroup(): void {
    this.#epoch = 0n;
    this.#leaves = [];
    this.#proposals = [];
    for (const member of this.#members.values()) {
      member.keyPackage = undefined;
      member.recovering = false;
    }
  }

  #executeTransition(): void {
    const transition = this.#transition;
    if (transition === undefined) return;
    this.#transition = undefined;
    for (const id of transition.notified) {
      this.#members
        .get(id)
        ?.link.sendJson(VoiceOpcodes.DaveExecuteTransition, { transition_id: transition.id });
    }
  }

  #nextTransitionId(): number {
    this.#lastTransitionId = this.#lastTransitionId >= MAX_TRANSITION_ID ? 1 : this.#lastTransitionId + 1;
    return this.#lastTransitionId;
  }

  async #propose(
    proposal: Parameters<DaveExternalSender['propose']>[2],
    kind: SentProposal['kind'],
    userId: string,
    leaf?: number,
  ): Promise<SentProposal> {
    const signed = await this.#sender.propose(this.#groupId, this.#epoch, proposal);
    const sent: SentProposal = {
      refHex: hex(signed.ref),
      ref: signed.ref,
      kind,
      userId,
      leaf,
      recipients: new Set<string>(),
      revoked: false,
      message: signed.message,
    };
    this.#proposals.push(sent);
    return sent;
  }

  #send(proposal: SentProposal, recipients: readonly string[]): void {
    const payload = proposalsPayload(DaveProposalsOperation.Append, [proposal.message]);
    for (const id of recipients) {
      proposal.recipients.add(id);
      this.#members.get(id)?.link.sendBinary(VoiceOpcodes.DaveMlsProposals, payload);
    }
  }

  /** Op 27 revoke: proposals for a member who no longer needs them never reach a commit. */
  #revoke(match: (proposal: SentProposal) => boolean): void {
    const revoked = this.#proposals.filter((p) => !p.revoked && match(p));
    for (const proposal of revoked) {
      proposal.revoked = true;
      const payload = proposalsPayload(DaveProposalsOperation.Revoke, [proposal.ref]);
      for (const id of proposal.recipients) {
        this.#members.get(id)?.link.sendBinary(VoiceOpcodes.DaveMlsProposals, payload);
      }
    }
  }

  #leafOf(userId: string): number | undefined {
    const leaf = this.#leaves.indexOf(userId);
    return leaf === -1 ? undefined : leaf;
  }

  /** Connected members of the established group that can still process proposals. */
  #groupRecipients(): string[] {
    return this.#leaves.filter(
      (id): id is string => id !== undefined && this.#members.has(id) && !this.#members.get(id)?.recovering,
    );
  }

  #pendingRecipients(except: string): string[] {
    return [...this.#members.values()]
      .filter((m) => m.described && m.link.userId !== except)
      .map((m) => m.link.userId);
  }

  #reject(reason: DaveRejection): void {
    this.rejections.push(reason);
  }
}

function u16(value: number): Uint8Array {
  return Uint8Array.of(value >> 8, value & 0xff);
}
