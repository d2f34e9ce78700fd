/**
 * DAVE's delivery service on one voice server (protocol.md, Delivery Service): the external sender key pair
 * of the node and one `DaveCall` per call. The voice session calls it on identify, session description,
 * binary frames (ops 26 and 28), ops 23 and 31, and when a member leaves; each call's messages are handled
 * one at a time in arrival order, so the first valid commit of an epoch is the one announced.
 */
import { DAVE_TRANSITION_TIMEOUT_MS, VoiceOpcodes } from '@hearth/protocol';
import type { Clock } from '../../../kernel/clock.js';
import { DaveCall, type DaveMemberLink } from './call.js';
import { DaveExternalSender } from './mls.js';

export interface DaveDeliveryServiceOptions {
  clock: Clock;
  externalSender: DaveExternalSender;
  transitionTimeoutMs?: number;
  /** How often the transition deadlines are checked against the clock (0: only by `expireTransitions`). */
  sweepIntervalMs?: number;
  onError?: (error: unknown, callId: string) => void;
}

export class DaveDeliveryService {
  readonly #clock: Clock;
  readonly #sender: DaveExternalSender;
  readonly #timeoutMs: number;
  readonly #onError: (error: unknown, callId: string) => void;
  readonly #calls = new Map<string, DaveCall>();
  readonly #queues = new Map<string, Promise<void>>();
  readonly #sweep: NodeJS.Timeout | undefined;
  #epochs = 0;

  constructor(options: DaveDeliveryServiceOptions) {
    this.#clock = options.clock;
    this.#sender = options.externalSender;
    this.#timeoutMs = options.transitionTimeoutMs ?? DAVE_TRANSITION_TIMEOUT_MS;
    this.#onError = options.onError ?? (() => {});
    const sweepMs = options.sweepIntervalMs ?? 250;
    if (sweepMs > 0) {
      this.#sweep = setInterval(() => this.expireTransitions(), sweepMs);
      // The sweep must not keep a process (or a test runner) alive.
      this.#sweep.unref();
    }
  }

  /** A node's service with a fresh P-256 external sender; `identity` names the node in the sender's credential. */
  static async create(options: Omit<DaveDeliveryServiceOptions, 'externalSender'> & { identity?: string }) {
    const externalSender = await DaveExternalSender.generate(options.identity ?? 'hearth-voice');
    return new DaveDeliveryService({ ...options, externalSender });
  }

  /** Epochs committed in every call of this node since it started (each add, remove or new group). */
  get epochTransitions(): number {
    return this.#epochs;
  }

  get externalSender(): DaveExternalSender {
    return this.#sender;
  }

  /**
   * A member selected its protocol; returns the `dave_protocol_version` its op 4 carries. Called again for
   * the same session it changes nothing; a new session of a user still in the group has it removed and re-added.
   */
  join(callId: string, channelId: string, link: DaveMemberLink, maxDaveVersion: number): number {
    let call = this.#calls.get(callId);
    if (call === undefined) {
      call = new DaveCall(channelId, this.#sender, () => {
        this.#epochs += 1;
      });
      this.#calls.set(callId, call);
    }
    const { version, replaced } = call.join(link, maxDaveVersion, this.#clock.now(), this.#timeoutMs);
    if (replaced) void this.#run(callId, (c) => c.invalidCommitWelcome(link.userId));
    return version;
  }

  /** Op 4 was sent to the member. */
  described(callId: string, userId: string): Promise<void> {
    return this.#run(callId, (call) => call.described(userId));
  }

  /** A binary client frame: op 26 (key package) or op 28 (commit and welcome); other ops are not DAVE's. */
  binary(callId: string, userId: string, op: number, payload: Uint8Array): Promise<void> {
    const bytes = Uint8Array.from(payload);
    if (op === VoiceOpcodes.DaveMlsKeyPackage)
      return this.#run(callId, (call) => call.keyPackage(userId, bytes));
    if (op === VoiceOpcodes.DaveMlsCommitWelcome) {
      return this.#run(callId, (call) =>
        call.commitWelcome(userId, bytes, this.#clock.now(), this.#timeoutMs),
      );
    }
    return Promise.resolve();
  }

  /** Op 23. */
  transitionReady(callId: string, userId: string, transitionId: number): Promise<void> {
    return this.#run(callId, (call) => call.transitionReady(userId, transitionId));
  }

  /** Op 31. */
  invalidCommitWelcome(callId: string, userId: string): Promise<void> {
    return this.#run(callId, (call) => call.invalidCommitWelcome(userId));
  }

  /** The member's voice session ended (disconnect, move, or a session that could not be resumed). */
  leave(callId: string, link: DaveMemberLink): Promise<void> {
    return this.#run(callId, async (call) => {
      await call.leave(link);
      if (call.empty) this.#calls.delete(callId);
    });
  }

  /** The voice gateway dropped the call (its last member left). */
  forget(callId: string): Promise<void> {
    return this.#run(callId, () => {
      if (this.#calls.get(callId)?.empty) this.#calls.delete(callId);
    });
  }

  /** Sends op 22 for every transition whose deadline has passed on the injected clock. */
  expireTransitions(): void {
    const now = this.#clock.now();
    for (const callId of this.#calls.keys()) void this.#run(callId, (call) => call.expire(now));
  }

  call(callId: string): DaveCall | undefined {
    return this.#calls.get(callId);
  }

  /** Resolves when every message received so far has been handled. */
  async idle(): Promise<void> {
    while (this.#queues.size > 0) await Promise.all(this.#queues.values());
  }

  close(): void {
    if (this.#sweep !== undefined) clearInterval(this.#sweep);
  }

  #run(callId: string, step: (call: DaveCall) => void | Promise<void>): Promise<void> {
    const previous = this.#queues.get(callId) ?? Promise.resolve();
    const next = previous.then(async () => {
      const call = this.#calls.get(callId);
      if (call === undefined) return;
      try {
        await step(call);
      } catch (error) {
        this.#onError(error, callId);
      }
    });
    this.#queues.set(callId, next);
    void next.then(() => {
      if (this.#queues.get(callId) === next) this.#queues.delete(callId);
    });
    return next;
  }
}
