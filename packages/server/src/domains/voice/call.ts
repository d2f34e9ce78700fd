import { VoiceOpcodes } from '@hearth/protocol';
import type { E2eeCall, E2eeCallState, E2eeCalls, E2eeMember } from './e2ee.js';
import type { VoiceSession } from './session.js';

/**
 * One call on this node (a guild voice channel or a lobby): its members' sessions, the messages they tell
 * each other (op 5, 11, 13, 18, 20) and its end-to-end state.
 */
export class VoiceCall implements E2eeCall {
  readonly channelId: string;
  readonly serverId: string;
  readonly e2ee: E2eeCallState;
  readonly #sessions = new Map<VoiceSession, E2eeMember>();

  constructor(channelId: string, serverId: string, e2ee: E2eeCalls) {
    this.channelId = channelId;
    this.serverId = serverId;
    this.e2ee = e2ee.open(this);
  }

  get size(): number {
    return this.#sessions.size;
  }

  sessions(): VoiceSession[] {
    return [...this.#sessions.keys()];
  }

  members(): E2eeMember[] {
    return [...this.#sessions.values()];
  }

  memberOf(session: VoiceSession): E2eeMember | undefined {
    return this.#sessions.get(session);
  }

  /** The session joins: it learns who is here (op 11) and they learn of it. */
  add(session: VoiceSession, member: E2eeMember): void {
    const others = this.sessions().filter((other) => other.userId !== session.userId);
    if (others.length > 0) {
      session.send(VoiceOpcodes.ClientsConnect, { user_ids: others.map((other) => other.userId) });
    }
    for (const other of others) {
      if (other.flags !== undefined)
        session.send(VoiceOpcodes.ClientFlags, { user_id: other.userId, flags: other.flags });
      if (other.platform !== undefined)
        session.send(VoiceOpcodes.ClientPlatform, { user_id: other.userId, platform: other.platform });
    }
    this.broadcast(session, VoiceOpcodes.ClientsConnect, { user_ids: [session.userId] });
    this.#sessions.set(session, member);
  }

  /** The session leaves: the others get op 13, the end-to-end state drops it. */
  remove(session: VoiceSession): void {
    const member = this.#sessions.get(session);
    if (!member) return;
    this.#sessions.delete(session);
    if (session.mode !== undefined) this.e2ee.left(member);
    this.broadcast(session, VoiceOpcodes.ClientDisconnect, { user_id: session.userId });
  }

  /** The SSRC and speaking flags of every other member that announced them (op 5), for a joiner. */
  speakingOf(session: VoiceSession): void {
    for (const other of this.sessions()) {
      if (other === session || other.speaking === undefined) continue;
      session.send(VoiceOpcodes.Speaking, {
        user_id: other.userId,
        ssrc: other.ssrc,
        speaking: other.speaking,
      });
    }
  }

  broadcast(from: VoiceSession, op: number, d: unknown): void {
    for (const other of this.#sessions.keys()) if (other !== from) other.send(op, d);
  }
}
