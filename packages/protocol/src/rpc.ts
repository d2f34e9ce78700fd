import { Scopes } from './scopes.js';

/**
 * The local RPC transport (PROTOCOL.md §H; VOICE-RPC.md §5): the channel between a game on the player's
 * machine and the platform client standing beside it, over an IPC socket or a loopback WebSocket.
 */

/** The only RPC version served: the handshake `v` and the WebSocket `?v=` (§H). */
export const RPC_VERSION = 1;

/** IPC frame opcodes: `<op u32 LE><len u32 LE><JSON>` (§H Framing). */
export const RpcIpcOpcodes = {
  Handshake: 0,
  Frame: 1,
  Close: 2,
  Ping: 3,
  Pong: 4,
} as const;
export type RpcIpcOpcode = (typeof RpcIpcOpcodes)[keyof typeof RpcIpcOpcodes];

/** Bytes of an IPC frame header: opcode and length, each a u32 LE. */
export const RPC_IPC_HEADER_BYTES = 8;

/**
 * Where the transports listen (§H): IPC slots `discord-ipc-0` … `-9`, WebSocket ports 6463–6472 on loopback.
 * The platform gives no frame size limit; Hearth's is its own, far above any command a client sends.
 */
export const RpcLimits = {
  ipcSlots: 10,
  wsPortBase: 6463,
  wsPortCount: 10,
  frameMaxBytes: 64 * 1024,
  /** RPC origins an application may register (Hearth's limit; the platform publishes none). */
  originsMax: 10,
  originMaxLength: 2048,
} as const;

/** The name of IPC slot `n`: a file in the runtime directory on Unix, a named pipe on Windows. */
export const rpcIpcName = (slot: number): string => `discord-ipc-${slot}`;

/** Environment variables searched, in order, for the IPC directory; `/tmp` when none is set (§H). */
export const RPC_IPC_DIR_VARIABLES = ['XDG_RUNTIME_DIR', 'TMPDIR', 'TMP', 'TEMP'] as const;

/** RPC commands (§H Commands; DAT `RPCCommands`): those Hearth serves, and the libraries' alias. */
export const RpcCommands = {
  Dispatch: 'DISPATCH',
  Authorize: 'AUTHORIZE',
  Authenticate: 'AUTHENTICATE',
  GetGuild: 'GET_GUILD',
  GetGuilds: 'GET_GUILDS',
  GetChannel: 'GET_CHANNEL',
  GetChannels: 'GET_CHANNELS',
  Subscribe: 'SUBSCRIBE',
  Unsubscribe: 'UNSUBSCRIBE',
  SetUserVoiceSettings: 'SET_USER_VOICE_SETTINGS',
  SelectVoiceChannel: 'SELECT_VOICE_CHANNEL',
  GetSelectedVoiceChannel: 'GET_SELECTED_VOICE_CHANNEL',
  GetVoiceSettings: 'GET_VOICE_SETTINGS',
  SetActivity: 'SET_ACTIVITY',
  SendActivityJoinInvite: 'SEND_ACTIVITY_JOIN_INVITE',
  CloseActivityRequest: 'CLOSE_ACTIVITY_REQUEST',
  /** The name `discord-rpc` and `@xhayper/discord-rpc` send for CLOSE_ACTIVITY_REQUEST (VOICE-RPC.md §5). */
  CloseActivityJoinRequest: 'CLOSE_ACTIVITY_JOIN_REQUEST',
  /** The platform client's "Join" on an invite (DAT `RPCCommands.AcceptActivityInvite`): joins or launches the game. */
  AcceptActivityInvite: 'ACCEPT_ACTIVITY_INVITE',
} as const;
export type RpcCommand = (typeof RpcCommands)[keyof typeof RpcCommands];

/** RPC events (§H Events) that Hearth dispatches. */
export const RpcEvents = {
  Ready: 'READY',
  Error: 'ERROR',
  GuildStatus: 'GUILD_STATUS',
  GuildCreate: 'GUILD_CREATE',
  ChannelCreate: 'CHANNEL_CREATE',
  VoiceChannelSelect: 'VOICE_CHANNEL_SELECT',
  VoiceStateCreate: 'VOICE_STATE_CREATE',
  VoiceStateUpdate: 'VOICE_STATE_UPDATE',
  VoiceStateDelete: 'VOICE_STATE_DELETE',
  VoiceSettingsUpdate: 'VOICE_SETTINGS_UPDATE',
  VoiceConnectionStatus: 'VOICE_CONNECTION_STATUS',
  SpeakingStart: 'SPEAKING_START',
  SpeakingStop: 'SPEAKING_STOP',
  MessageCreate: 'MESSAGE_CREATE',
  MessageUpdate: 'MESSAGE_UPDATE',
  MessageDelete: 'MESSAGE_DELETE',
  NotificationCreate: 'NOTIFICATION_CREATE',
  ActivityJoin: 'ACTIVITY_JOIN',
  ActivitySpectate: 'ACTIVITY_SPECTATE',
  ActivityJoinRequest: 'ACTIVITY_JOIN_REQUEST',
  ActivityInvite: 'ACTIVITY_INVITE',
} as const;
export type RpcEvent = (typeof RpcEvents)[keyof typeof RpcEvents];

/** Error codes of an `evt: "ERROR"` reply (§H Error codes; DAT `RPCErrorCodes`). */
export const RpcErrorCodes = {
  UnknownError: 1000,
  ServiceUnavailable: 1001,
  InvalidPayload: 4000,
  InvalidCommand: 4002,
  InvalidGuild: 4003,
  InvalidEvent: 4004,
  InvalidChannel: 4005,
  InvalidPermissions: 4006,
  InvalidClientId: 4007,
  InvalidOrigin: 4008,
  InvalidToken: 4009,
  InvalidUser: 4010,
  InvalidInvite: 4011,
  InvalidActivityJoinRequest: 4012,
  OAuth2Error: 5000,
  SelectChannelTimedOut: 5001,
  GetGuildTimedOut: 5002,
  SelectVoiceForceRequired: 5003,
  InvalidActivitySecret: 5005,
  NoEligibleActivity: 5006,
  RateLimited: 5010,
} as const;
export type RpcErrorCode = (typeof RpcErrorCodes)[keyof typeof RpcErrorCodes];

/** Close codes of a connection (§H Close codes; DAT `RPCCloseEventCodes`): a WebSocket close or an IPC CLOSE. */
export const RpcCloseCodes = {
  Normal: 1000,
  /** A frame the transport cannot read: over the size limit, not JSON, an unknown opcode (UDOC). */
  Unsupported: 1003,
  Abnormal: 1006,
  InvalidClientId: 4000,
  InvalidOrigin: 4001,
  RateLimited: 4002,
  TokenRevoked: 4003,
  InvalidVersion: 4004,
  InvalidEncoding: 4005,
} as const;
export type RpcCloseCode = (typeof RpcCloseCodes)[keyof typeof RpcCloseCodes];

/**
 * The scopes each command needs once authenticated (§H; DOCS rpc.mdx "Commands" table): any one of a list
 * suffices. Commands absent here need only an authenticated connection; AUTHORIZE, AUTHENTICATE, SET_ACTIVITY
 * and the activity request commands need none (a game sets its rich presence without signing in).
 */
export const RPC_COMMAND_SCOPES: Readonly<Partial<Record<RpcCommand, readonly string[]>>> = {
  [RpcCommands.GetGuild]: [Scopes.Rpc],
  [RpcCommands.GetGuilds]: [Scopes.Rpc],
  [RpcCommands.GetChannel]: [Scopes.Rpc],
  [RpcCommands.GetChannels]: [Scopes.Rpc],
  [RpcCommands.SetUserVoiceSettings]: [Scopes.Rpc, Scopes.RpcVoiceWrite],
  [RpcCommands.SelectVoiceChannel]: [Scopes.Rpc, Scopes.RpcVoiceWrite],
  [RpcCommands.GetSelectedVoiceChannel]: [Scopes.Rpc, Scopes.RpcVoiceRead],
  [RpcCommands.GetVoiceSettings]: [Scopes.Rpc, Scopes.RpcVoiceRead],
  [RpcCommands.AcceptActivityInvite]: [Scopes.Rpc],
};

/** The scopes each subscribable event needs (any one of a list); absent: authentication alone. */
export const RPC_EVENT_SCOPES: Readonly<Partial<Record<RpcEvent, readonly string[]>>> = {
  [RpcEvents.GuildStatus]: [Scopes.Rpc],
  [RpcEvents.GuildCreate]: [Scopes.Rpc],
  [RpcEvents.ChannelCreate]: [Scopes.Rpc],
  [RpcEvents.VoiceChannelSelect]: [Scopes.Rpc],
  [RpcEvents.VoiceStateCreate]: [Scopes.Rpc, Scopes.RpcVoiceRead],
  [RpcEvents.VoiceStateUpdate]: [Scopes.Rpc, Scopes.RpcVoiceRead],
  [RpcEvents.VoiceStateDelete]: [Scopes.Rpc, Scopes.RpcVoiceRead],
  [RpcEvents.VoiceSettingsUpdate]: [Scopes.Rpc, Scopes.RpcVoiceRead],
  [RpcEvents.VoiceConnectionStatus]: [Scopes.Rpc, Scopes.RpcVoiceRead],
  [RpcEvents.SpeakingStart]: [Scopes.Rpc, Scopes.RpcVoiceRead],
  [RpcEvents.SpeakingStop]: [Scopes.Rpc, Scopes.RpcVoiceRead],
  [RpcEvents.MessageCreate]: [Scopes.Rpc, Scopes.MessagesRead],
  [RpcEvents.MessageUpdate]: [Scopes.Rpc, Scopes.MessagesRead],
  [RpcEvents.MessageDelete]: [Scopes.Rpc, Scopes.MessagesRead],
  [RpcEvents.NotificationCreate]: [Scopes.RpcNotificationsRead],
};

/** Events a game may subscribe to before AUTHENTICATE: its own activity's joins (DOCS rpc.mdx SUBSCRIBE). */
export const RPC_UNAUTHENTICATED_EVENTS: readonly RpcEvent[] = [
  RpcEvents.ActivityJoin,
  RpcEvents.ActivitySpectate,
  RpcEvents.ActivityJoinRequest,
  RpcEvents.ActivityInvite,
];

/** Activity types SET_ACTIVITY accepts: Playing, Listening, Watching, Competing (§H). */
export const RPC_ACTIVITY_TYPES: readonly number[] = [0, 2, 3, 5];
