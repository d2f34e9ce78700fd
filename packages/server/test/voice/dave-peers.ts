/**
 * DAVE peers for protocol-level tests: `@snazzah/davey` sessions (the client side of `@discordjs/voice`)
 * reacting to the delivery service's messages the way that client's Networking class does.
 */
import { DAVESession } from '@snazzah/davey';
import type { DaveMemberLink } from '../../src/domains/voice/dave/call.js';
import type { DaveDeliveryService } from '../../src/domains/voice/dave/service.js';

export const CHANNEL_ID = '927310423890473011';
export const CALL_ID = `channel:${CHANNEL_ID}`;

export type ServerMessage = { op: number; d: Record<string, unknown> } | { op: number; binary: Buffer };

/** What a peer sends instead of an op 28: the peer may hold it back, or the test may alter it. */
export type CommitHook = (peer: DavePeer, payload: Buffer) => Buffer | undefined;

export class DavePeer implements DaveMemberLink {
  readonly userId: string;
  readonly session: DAVESession;
  readonly received: ServerMessage[] = [];
  readonly inbox: ServerMessage[] = [];
  readonly commits: Buffer[] = [];
  readonly welcomes: Buffer[] = [];
  readonly executed: number[] = [];
  readonly #service: DaveDeliveryService;
  readonly #roster: Set<string>;
  commitHook: CommitHook | undefined;
  /** Answers op 23 itself; false lets a test stay silent to exercise the timeout. */
  ready = true;
  pending = new Map<number, number>();
  protocolVersion = 0;

  constructor(userId: string, service: DaveDeliveryService, roster: Set<string>) {
    this.userId = userId;
    this.#service = service;
    this.#roster = roster;
    this.session = new DAVESession(1, userId, CHANNEL_ID);
  }

  sendJson(op: number, d: Record<string, unknown>): void {
    this.received.push({ op, d });
    this.inbox.push({ op, d });
  }

  sendBinary(op: number, payload: Uint8Array): void {
    const message = { op, binary: Buffer.from(payload) };
    this.received.push(message);
    this.inbox.push(message);
  }

  /** Identify with DAVE (or without), then op 4 and the key package @discordjs/voice sends on it. */
  async connect(maxVersion = 1): Promise<number> {
    this.#roster.add(this.userId);
    const version = this.#service.join(CALL_ID, CHANNEL_ID, this, maxVersion);
    this.protocolVersion = version;
    await this.#service.described(CALL_ID, this.userId);
    if (version > 0) {
      this.session.reinit(version, this.userId, CHANNEL_ID);
      await this.#service.binary(CALL_ID, this.userId, 26, this.session.getSerializedKeyPackage());
    }
    return version;
  }

  async disconnect(): Promise<void> {
    this.#roster.delete(this.userId);
    await this.#service.leave(CALL_ID, this);
  }

  /** Handles everything in the inbox; returns whether anything was handled. */
  async drain(): Promise<boolean> {
    let handled = false;
    for (let message = this.inbox.shift(); message !== undefined; message = this.inbox.shift()) {
      handled = true;
      if ('binary' in message) await this.#binary(message.op, message.binary);
      else await this.#json(message.op, message.d);
    }
    return handled;
  }

  async #json(op: number, d: Record<string, unknown>): Promise<void> {
    if (op === 21) {
      const id = d.transition_id as number;
      this.pending.set(id, d.protocol_version as number);
      if (id === 0) this.#execute(0);
      else if (this.ready) await this.#service.transitionReady(CALL_ID, this.userId, id);
    } else if (op === 22) {
      this.#execute(d.transition_id as number);
    } else if (op === 24 && d.epoch === 1) {
      this.protocolVersion = d.protocol_version as number;
      this.session.reinit(this.protocolVersion, this.userId, CHANNEL_ID);
      await this.#service.binary(CALL_ID, this.userId, 26, this.session.getSerializedKeyPackage());
    }
  }

  async #binary(op: number, payload: Buffer): Promise<void> {
    if (op === 25) {
      this.session.setExternalSender(payload);
    } else if (op === 27) {
      const { commit, welcome } = this.session.processProposals(payload.readUInt8(0), payload.subarray(1), [
        ...this.#roster,
      ]);
      if (commit === undefined) return;
      const body = welcome ? Buffer.concat([commit, welcome]) : commit;
      this.commits.push(body);
      const sent = this.commitHook ? this.commitHook(this, body) : body;
      if (sent !== undefined) await this.#service.binary(CALL_ID, this.userId, 28, sent);
    } else if (op === 29 || op === 30) {
      const transitionId = payload.readUInt16BE(0);
      if (op === 30) this.welcomes.push(payload.subarray(2));
      try {
        if (op === 29) this.session.processCommit(payload.subarray(2));
        else this.session.processWelcome(payload.subarray(2));
      } catch {
        this.session.reinit(this.protocolVersion, this.userId, CHANNEL_ID);
        await this.#service.invalidCommitWelcome(CALL_ID, this.userId);
        await this.#service.binary(CALL_ID, this.userId, 26, this.session.getSerializedKeyPackage());
        return;
      }
      if (transitionId === 0) this.#execute(0);
      else {
        this.pending.set(transitionId, this.protocolVersion);
        if (this.ready) await this.#service.transitionReady(CALL_ID, this.userId, transitionId);
      }
    }
  }

  #execute(id: number): void {
    this.executed.push(id);
    const version = this.pending.get(id);
    if (version !== undefined) this.protocolVersion = version;
    this.pending.delete(id);
  }

  /** The ops this peer received, in order. */
  ops(): number[] {
    return this.received.map((m) => m.op);
  }
}

/** Delivers every queued message until nobody has anything left to handle. */
export async function settle(service: DaveDeliveryService, peers: readonly DavePeer[]): Promise<void> {
  for (;;) {
    await service.idle();
    let handled = false;
    for (const peer of peers) if (await peer.drain()) handled = true;
    await service.idle();
    if (!handled && peers.every((p) => p.inbox.length === 0)) return;
  }
}

/** A 40-byte Opus-sized frame one peer encrypts and another decrypts: the members' frame keys agree. */
export function exchange(
  from: DavePeer,
  to: DavePeer,
  marker: number,
): { sent: Buffer; received: Buffer; wire: Buffer } {
  const sent = Buffer.alloc(40, marker);
  sent.writeUInt32BE(marker, 0);
  const wire = from.session.encryptOpus(sent);
  const received = to.session.decrypt(from.userId, 0, wire);
  return { sent, received, wire };
}
