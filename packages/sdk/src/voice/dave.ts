/**
 * The client side of DAVE, the calls' end-to-end encryption (VOICE-RPC.md §1 DAVE): the MLS member that
 * answers the voice gateway's ops 21–31 and encrypts and decrypts Opus frames. The MLS and frame work is
 * `@snazzah/davey`'s (openmls, native, Node) or the plain TypeScript one on `ts-mls` (dave-ts.ts, browsers
 * and Node's fallback), injected so the core imports no native code.
 */
import { VoiceOpcodes } from '@hearth/protocol';
import { isSilenceFrame } from './rtp.js';

/** A result now (a native session) or later (an MLS library whose crypto is asynchronous). */
export type MaybePromise<T> = T | Promise<T>;

/** The commit and, when members were added, the welcome a member answers proposals with (op 28). */
export interface DaveCommitWelcome {
  commit?: Uint8Array | undefined;
  welcome?: Uint8Array | undefined;
}

/**
 * What the call needs of a DAVE session (the shape of `@snazzah/davey`'s DAVESession). The MLS steps may
 * answer with a promise; frames are encrypted and decrypted synchronously, on the media path.
 */
export interface DaveSessionLike {
  readonly ready: boolean;
  reinit(protocolVersion: number, userId: string, channelId: string): MaybePromise<void>;
  reset(): void;
  setExternalSender(externalSender: Uint8Array): MaybePromise<void>;
  getSerializedKeyPackage(): MaybePromise<Uint8Array>;
  processProposals(
    operation: number,
    proposals: Uint8Array,
    recognizedUserIds: string[],
  ): MaybePromise<DaveCommitWelcome>;
  processWelcome(welcome: Uint8Array): MaybePromise<void>;
  processCommit(commit: Uint8Array): MaybePromise<void>;
  encryptOpus(frame: Uint8Array): Uint8Array;
  decryptOpus(userId: string, frame: Uint8Array): Uint8Array;
  canPassthrough(userId: string): boolean;
  setPassthroughMode(passthrough: boolean, expirySeconds?: number): void;
}

/** Makes DAVE sessions; `maxProtocolVersion` is what Identify offers. */
export interface DaveProvider {
  readonly maxProtocolVersion: number;
  create(protocolVersion: number, userId: string, channelId: string): DaveSessionLike;
}

/** Seconds a member keeps accepting unencrypted frames across a transition (as the platform's clients do). */
const TRANSITION_EXPIRY_S = 10;

/** How E2EE talks back to the voice gateway. */
export interface DaveLink {
  sendJson(op: number, d: unknown): void;
  sendBinary(op: number, payload: Uint8Array): void;
  /** The user ids the gateway announced in the call (op 11): proposals for others are refused. */
  connectedUserIds(): string[];
  log(message: string): void;
}

/**
 * One call's E2EE state: the protocol version in force, pending transitions, and the session. The
 * gateway's ops are handled one after the other, each after the previous one's MLS work has finished.
 */
export class DaveMember {
  #version: number;
  #session: DaveSessionLike | undefined;
  readonly #pending = new Map<number, number>();
  #queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly provider: DaveProvider,
    private readonly userId: string,
    private readonly channelId: string,
    protocolVersion: number,
    private readonly link: DaveLink,
  ) {
    this.#version = protocolVersion;
    this.#enqueue('init', () => this.#reinit());
  }

  /** Settles when every op received so far has been handled. */
  idle(): Promise<void> {
    return this.#queue;
  }

  #enqueue(what: string, step: () => MaybePromise<void>): void {
    this.#queue = this.#queue.then(step).catch((error: unknown) => {
      this.link.log(`DAVE ${what} failed: ${String(error)}`);
    });
  }

  get protocolVersion(): number {
    return this.#version;
  }

  /** Whether frames are end-to-end encrypted now. */
  get active(): boolean {
    return this.#version > 0 && (this.#session?.ready ?? false);
  }

  async #reinit(): Promise<void> {
    if (this.#version > 0) {
      if (this.#session) await this.#session.reinit(this.#version, this.userId, this.channelId);
      else this.#session = this.provider.create(this.#version, this.userId, this.channelId);
      this.link.sendBinary(VoiceOpcodes.DaveMlsKeyPackage, await this.#session.getSerializedKeyPackage());
    } else if (this.#session) {
      this.#session.reset();
      this.#session.setPassthroughMode(true, TRANSITION_EXPIRY_S);
    }
  }

  /** A JSON op of the DAVE range (21, 22, 24). */
  onJson(op: number, d: Record<string, unknown>): void {
    this.#enqueue(`op ${op}`, () => this.#json(op, d));
  }

  async #json(op: number, d: Record<string, unknown>): Promise<void> {
    const transitionId = Number(d.transition_id ?? 0);
    if (op === VoiceOpcodes.DavePrepareTransition) {
      this.#pending.set(transitionId, Number(d.protocol_version ?? 0));
      if (transitionId === 0) this.#execute(0);
      else this.link.sendJson(VoiceOpcodes.DaveTransitionReady, { transition_id: transitionId });
    } else if (op === VoiceOpcodes.DaveExecuteTransition) {
      this.#execute(transitionId);
    } else if (op === VoiceOpcodes.DavePrepareEpoch && Number(d.epoch) === 1) {
      // Epoch 1 is a new group: start over with a fresh key package.
      this.#version = Number(d.protocol_version ?? this.#version);
      await this.#reinit();
    }
  }

  #execute(transitionId: number): void {
    const version = this.#pending.get(transitionId);
    if (version === undefined) return;
    this.#pending.delete(transitionId);
    this.#version = version;
  }

  /** A binary op (25, 27, 29, 30); the payload follows the op byte. */
  onBinary(op: number, payload: Uint8Array): void {
    this.#enqueue(`op ${op}`, () => this.#binary(op, payload));
  }

  async #binary(op: number, payload: Uint8Array): Promise<void> {
    const session = this.#session;
    if (!session) return;
    if (op === VoiceOpcodes.DaveMlsExternalSender) {
      await session.setExternalSender(payload);
    } else if (op === VoiceOpcodes.DaveMlsProposals) {
      const { commit, welcome } = await session.processProposals(
        payload[0] ?? 0,
        payload.subarray(1),
        this.link.connectedUserIds(),
      );
      if (!commit) return;
      const out = new Uint8Array(commit.length + (welcome?.length ?? 0));
      out.set(commit, 0);
      if (welcome) out.set(welcome, commit.length);
      this.link.sendBinary(VoiceOpcodes.DaveMlsCommitWelcome, out);
    } else if (op === VoiceOpcodes.DaveMlsAnnounceCommitTransition || op === VoiceOpcodes.DaveMlsWelcome) {
      const transitionId = ((payload[0] ?? 0) << 8) | (payload[1] ?? 0);
      try {
        if (op === VoiceOpcodes.DaveMlsWelcome) await session.processWelcome(payload.subarray(2));
        else await session.processCommit(payload.subarray(2));
      } catch (error) {
        // The gateway removes and re-adds this member (op 31); meanwhile we start over with a new key package.
        this.link.log(
          `DAVE ${op === VoiceOpcodes.DaveMlsWelcome ? 'welcome' : 'commit'} refused: ${String(error)}`,
        );
        this.link.sendJson(VoiceOpcodes.DaveMlsInvalidCommitWelcome, { transition_id: transitionId });
        await this.#reinit();
        return;
      }
      if (transitionId !== 0) {
        this.#pending.set(transitionId, this.#version);
        this.link.sendJson(VoiceOpcodes.DaveTransitionReady, { transition_id: transitionId });
      }
    }
  }

  /** An Opus frame to send: encrypted once the group is ready; silence frames pass in clear. */
  encrypt(frame: Uint8Array): Uint8Array {
    if (!this.active || isSilenceFrame(frame)) return frame;
    return (this.#session as DaveSessionLike).encryptOpus(frame);
  }

  /** A received Opus frame in clear, or undefined when it cannot be decrypted yet (dropped). */
  decrypt(userId: string, frame: Uint8Array): Uint8Array | undefined {
    const session = this.#session;
    if (isSilenceFrame(frame) || !session?.ready) return frame;
    if (this.#version === 0 && !session.canPassthrough(userId)) return frame;
    try {
      return session.decryptOpus(userId, frame);
    } catch {
      return undefined;
    }
  }

  close(): void {
    try {
      this.#session?.reset();
    } catch {
      // A session already torn down has nothing left to reset.
    }
  }
}
