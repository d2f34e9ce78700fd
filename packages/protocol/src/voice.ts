/**
 * The voice gateway and its UDP media (PROTOCOL.md §G, reference/VOICE-RPC.md): opcodes, close codes,
 * encryption modes and the byte layouts both the server and the client library rely on.
 */

/** Voice gateway versions: none or below 4 is refused (since 2024-11-18); 8 adds buffered resume. */
export const VOICE_GATEWAY_MIN_VERSION = 4;
export const VOICE_GATEWAY_BUFFERED_RESUME_VERSION = 8;
export const VOICE_GATEWAY_MAX_VERSION = 8;

/** Voice gateway opcodes (PROTOCOL.md §G.2); 21–31 are DAVE's. */
export const VoiceOpcodes = {
  Identify: 0,
  SelectProtocol: 1,
  Ready: 2,
  Heartbeat: 3,
  SessionDescription: 4,
  Speaking: 5,
  HeartbeatAck: 6,
  Resume: 7,
  Hello: 8,
  Resumed: 9,
  ClientsConnect: 11,
  ClientDisconnect: 13,
  ClientFlags: 18,
  ClientPlatform: 20,
  DavePrepareTransition: 21,
  DaveExecuteTransition: 22,
  DaveTransitionReady: 23,
  DavePrepareEpoch: 24,
  DaveMlsExternalSender: 25,
  DaveMlsKeyPackage: 26,
  DaveMlsProposals: 27,
  DaveMlsCommitWelcome: 28,
  DaveMlsAnnounceCommitTransition: 29,
  DaveMlsWelcome: 30,
  DaveMlsInvalidCommitWelcome: 31,
} as const;
export type VoiceOpcode = (typeof VoiceOpcodes)[keyof typeof VoiceOpcodes];

/**
 * Voice close codes (PROTOCOL.md §G.2). A missing or too old `v` has no documented code: Hearth closes with
 * 4006 as the platform's clients expect of a session they may not continue (VOICE-RPC §3).
 */
export const VoiceCloseCodes = {
  UnknownOpcode: 4001,
  FailedToDecodePayload: 4002,
  NotAuthenticated: 4003,
  AuthenticationFailed: 4004,
  AlreadyAuthenticated: 4005,
  SessionNoLongerValid: 4006,
  SessionTimeout: 4009,
  ServerNotFound: 4011,
  UnknownProtocol: 4012,
  Disconnected: 4014,
  VoiceServerCrashed: 4015,
  UnknownEncryptionMode: 4016,
  E2EERequired: 4017,
  BadRequest: 4020,
  RateLimited: 4021,
  CallTerminated: 4022,
} as const;
export type VoiceCloseCode = (typeof VoiceCloseCodes)[keyof typeof VoiceCloseCodes];

/** The close code of a refused `?v=` (none, not a number, or below 4). */
export const VOICE_VERSION_REFUSED_CLOSE_CODE = VoiceCloseCodes.SessionNoLongerValid;

/** Transport encryption modes: the only two served, in the order Ready offers them (clients take the first). */
export const VoiceEncryptionModes = {
  AeadAes256GcmRtpSize: 'aead_aes256_gcm_rtpsize',
  AeadXChaCha20Poly1305RtpSize: 'aead_xchacha20_poly1305_rtpsize',
} as const;
export type VoiceEncryptionMode = (typeof VoiceEncryptionModes)[keyof typeof VoiceEncryptionModes];
export const VOICE_ENCRYPTION_MODES: readonly VoiceEncryptionMode[] = [
  VoiceEncryptionModes.AeadAes256GcmRtpSize,
  VoiceEncryptionModes.AeadXChaCha20Poly1305RtpSize,
];

/**
 * Op 1 Select Protocol's `protocol` values. `udp` is the platform's. Discord's web client sends `webrtc` with
 * SDP fragments for an audio track (DTLS-SRTP media, no `secret_key`); Hearth's browser transport differs on
 * the wire, so it has its own value: a full SDP offer of one unreliable, unordered data channel carrying the
 * very datagrams of the UDP path (IP discovery, rtpsize-encrypted RTP with DAVE inside, RTCP).
 */
export const VoiceProtocols = {
  Udp: 'udp',
  WebRtcDataChannel: 'webrtc_datachannel',
} as const;
export type VoiceProtocol = (typeof VoiceProtocols)[keyof typeof VoiceProtocols];

/** Longest SDP offer op 1 `webrtc_datachannel` accepts (a data-channel offer is about 1 KB). */
export const VOICE_SDP_MAX_LENGTH = 16_384;

/**
 * Modes discontinued on 2024-11-18 with the v4 requirement (Timeline.voiceGatewayV4Required): Hearth never
 * served them, so selecting one closes 4016 whatever the date.
 */
export const DISCONTINUED_VOICE_ENCRYPTION_MODES: readonly string[] = [
  'xsalsa20_poly1305',
  'xsalsa20_poly1305_suffix',
  'xsalsa20_poly1305_lite',
  'xsalsa20_poly1305_lite_rtpsize',
  'aead_aes256_gcm',
];

/** Op 5 speaking bits (PROTOCOL.md §G.2); Priority needs PRIORITY_SPEAKER. */
export const SpeakingFlags = {
  Microphone: 1 << 0,
  Soundshare: 1 << 1,
  Priority: 1 << 2,
} as const;

/** The DAVE protocol version the server speaks (0: transport encryption only). */
export const DAVE_PROTOCOL_VERSION = 1;

/** Op 8 Hello: how often the client heartbeats (ms). */
export const VOICE_HEARTBEAT_INTERVAL_MS = 13_750;

/** Length of a voice transport key (`secret_key` of op 4). */
export const VOICE_SECRET_KEY_BYTES = 32;

/** UDP IP discovery (PROTOCOL.md §G.4): 74 bytes, type 1 request / 2 response, length 70. */
export const IpDiscovery = {
  PacketBytes: 74,
  Length: 70,
  Request: 1,
  Response: 2,
  AddressOffset: 8,
  AddressBytes: 64,
} as const;

/** RTP as the voice clients send it (PROTOCOL.md §G.4). */
export const Rtp = {
  HeaderBytes: 12,
  Version: 2,
  OpusPayloadType: 0x78,
  /** The X bit of the first byte (RFC 3550 §5.1): an extension preamble follows the CSRCs. */
  ExtensionBit: 0x10,
  /** Profile of the one-byte header extension (RFC 8285) the preamble starts with. */
  ExtensionProfile: 0xbede,
  /** rtpsize framing: 16-byte AEAD tag, then the 4-byte big-endian nonce counter. */
  TagBytes: 16,
  NonceBytes: 4,
} as const;

/** RTCP packet types (RFC 3550) the forwarder recognises by the second byte (200–204). */
export const RTCP_PACKET_TYPES = { min: 200, max: 204 } as const;

/** Lifetime of a voice token from VOICE_SERVER_UPDATE: it must be used (Identify or Resume) within this. */
export const VOICE_TOKEN_LIFETIME_MS = 10 * 60 * 1000;

/** Unacknowledged server messages a v8 session keeps for resume; an older `seq_ack` cannot resume. */
export const VOICE_RESUME_BUFFER_SIZE = 256;

/**
 * Frames a voice gateway connection may send per window; more closes it with 4021 ("disconnected due to
 * rate limit exceeded, should not reconnect"). The documents give the code, not the figure: twice the main
 * gateway's budget, since op 5 follows every talk spurt and DAVE adds a few frames per epoch.
 */
export const VOICE_CLIENT_FRAMES_LIMIT = { limit: 240, windowMs: 60_000 } as const;

/** How long a dropped voice session may be resumed (its member stays in the call meanwhile). */
export const VOICE_RESUME_WINDOW_MS = 30_000;

/**
 * Dispatches of calls in DMs (the platform's private calls): a call starts with its first participant and
 * ends with its last; its recipients receive them.
 */
export const CallDispatches = {
  CallCreate: 'CALL_CREATE',
  CallUpdate: 'CALL_UPDATE',
  CallDelete: 'CALL_DELETE',
} as const;

/**
 * Users in a group DM, its owner included (the platform's client limit; not in the references, unverified):
 * also the most recipients a ring route names.
 */
export const GROUP_DM_MAX_USERS = 10;

/** How long a call rings a recipient who neither joins nor declines, by default (`--voice-ring-timeout`). */
export const CALL_RING_TIMEOUT_DEFAULT_SECONDS = 60;

/** CALL_CREATE's `region`: Hearth's nodes form one deployment rather than regions, and say so. */
export const CALL_REGION = 'hearth';
