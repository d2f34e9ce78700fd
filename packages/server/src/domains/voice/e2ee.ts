/**
 * The seam for end-to-end encryption (DAVE, PROTOCOL.md §G.6; voice opcodes 21–31). The voice gateway
 * owns sockets, sequencing, resume and the call's membership; an `E2eeCalls` implementation owns the
 * MLS group of each call and talks to members only through `E2eeMember`. Order of calls, per member:
 * `protocolVersion` (at Select Protocol; the answer is op 4's `dave_protocol_version`), then `joined`
 * (after op 4 went out and op 11 told the others), `json`/`binary` for its DAVE frames, `left` once.
 * Calls without DAVE (version 0) use `NO_E2EE`, which answers 0 and ignores the rest.
 */
export interface E2eeCalls {
  /** The highest DAVE version this server speaks; 0 when it speaks none. */
  readonly maxProtocolVersion: number;
  /** The call's end-to-end state; made when its first member joins, `close`d when its last leaves. */
  open(call: E2eeCall): E2eeCallState;
}

/** A call as the seam sees it: its channel (the MLS group id) and its members right now. */
export interface E2eeCall {
  /** The guild voice channel or lobby id: DAVE's group id is it as a big-endian u64. */
  readonly channelId: string;
  readonly serverId: string;
  members(): readonly E2eeMember[];
}

/** A member of a call, through which the seam sends its opcodes; frames are sequenced for v8 resume. */
export interface E2eeMember {
  readonly userId: string;
  /** The smaller of the client's `max_dave_protocol_version` and the server's. */
  readonly maxProtocolVersion: number;
  /** A JSON opcode (21, 22, 24). */
  send(op: number, d: unknown): void;
  /** A binary opcode (25, 27, 29, 30): the gateway prefixes the u16 seq and the opcode byte. */
  sendBinary(op: number, payload: Uint8Array): void;
  /** Ends the member's voice session with a close code (e.g. 4017 when the call must stay encrypted). */
  close(code: number): void;
}

export interface E2eeCallState {
  /** The DAVE version the member's session uses (op 4); 0 for transport encryption only. */
  protocolVersion(member: E2eeMember): number;
  joined(member: E2eeMember): void;
  left(member: E2eeMember): void;
  /** JSON opcodes 23 (transition ready) and 31 (invalid commit/welcome). */
  json(member: E2eeMember, op: number, d: unknown): void;
  /** Binary opcodes 26 (key package) and 28 (commit/welcome); `payload` follows the opcode byte. */
  binary(member: E2eeMember, op: number, payload: Buffer): void;
  close(): void;
}

/** No end-to-end encryption: every session is transport-encrypted only; DAVE frames are ignored. */
export const NO_E2EE: E2eeCalls = {
  maxProtocolVersion: 0,
  open: () => ({
    protocolVersion: () => 0,
    joined: () => {},
    left: () => {},
    json: () => {},
    binary: () => {},
    close: () => {},
  }),
};
