/**
 * DAVE, the end-to-end encryption of calls (discord/dave-protocol `protocol.md`, reference/VOICE-RPC.md §1):
 * the MLS parameters of protocol version 1 and the binary layouts the voice gateway's delivery service and
 * the client library share. The opcodes themselves are voice opcodes 21–31 (`VoiceOpcodes`).
 */

/** MLS parameters of DAVE protocol version 1: MLS 1.0, ciphersuite 2, basic credentials only. */
export const DaveMls = {
  ProtocolVersion: 1,
  /** MLS_128_DHKEMP256_AES128GCM_SHA256_P256 */
  Ciphersuite: 2,
  CiphersuiteName: 'MLS_128_DHKEMP256_AES128GCM_SHA256_P256',
  /** The basic credential's identity is the user id as a big-endian u64; the group id is the channel id, the same way. */
  IdentityBytes: 8,
  GroupIdBytes: 8,
  /** A key package's lifetime must span everything: not_before 0, not_after 2^64 − 1. */
  LifetimeNotBefore: 0n,
  LifetimeNotAfter: 0xffff_ffff_ffff_ffffn,
} as const;

/** Op 27 `operation_type`: the proposals are appended, or the listed proposal refs are revoked. */
export const DaveProposalsOperation = {
  Append: 0,
  Revoke: 1,
} as const;
export type DaveProposalsOperation = (typeof DaveProposalsOperation)[keyof typeof DaveProposalsOperation];

/** Transition id 0 (ops 21, 29, 30) means "execute at once": group (re)initialisation and the sole-member reset. */
export const DAVE_INIT_TRANSITION_ID = 0;

/** Op 24 `epoch` 1 announces a new group: clients reset and send a fresh key package. */
export const DAVE_NEW_GROUP_EPOCH = 1;

/**
 * How long the gateway waits for every member's op 23 before it sends op 22 anyway; receivers keep old keys
 * for 10 s, and removed members may decrypt for "roughly two seconds" (protocol.md, Member Remove).
 */
export const DAVE_TRANSITION_TIMEOUT_MS = 2_000;

/**
 * The end of every DAVE media frame (protocol.md, Protocol Frame Check): `… || supplemental size (1) || 0xFAFA`.
 * A forwarder recognises end-to-end encrypted payloads by it without reading them.
 */
export const DAVE_FRAME_MAGIC_MARKER = 0xfafa;

/** The Opus silence frame clients send when a stream pauses; DAVE passes it through unencrypted. */
export const OPUS_SILENCE_FRAME: readonly number[] = [0xf8, 0xff, 0xfe];
