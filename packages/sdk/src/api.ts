export {
  AuthorizationArgs,
  AuthorizationCodeChallenge,
  AuthorizationCodeVerifier,
  AuthorizationTokenType,
  IntegrationType,
  UninitializedInstanceError,
} from './authorization.js';
export type {
  AuthorizationCallback,
  AuthorizationOutcome,
  AuthorizeRequestCallback,
  ChildTokenOutcome,
  ClientOptions,
  ExchangeChildTokenCallback,
  Opener,
  ResultCallback,
  TokenExchangeCallback,
  TokenOutcome,
} from './client.js';
export { customSchemeRedirect } from './client.js';
export type { ClientResultInit } from './client-result.js';
export { ClientResult, ErrorType } from './client-result.js';
export type { WebSocketConstructor, WebSocketLike } from './gateway/socket.js';
export { ClientError, ClientStatus, type StatusChangedCallback } from './gateway/status.js';
export {
  type GetGuildChannelsCallback,
  type GetUserGuildsCallback,
  GuildChannel,
  GuildMinimal,
  LinkedLobby,
} from './guilds/guilds.js';
export type {
  CreateOrJoinLobbyCallback,
  CreateOrJoinLobbyOutcome,
  GetLobbyMessagesCallback,
  GetLobbyMessagesOutcome,
  LobbyCallback,
  LobbyMemberCallback,
  SendLobbyMessageCallback,
  SendLobbyMessageOutcome,
} from './lobbies/lobbies.js';
export { LinkedChannel, LobbyHandle, LobbyMemberHandle } from './lobbies/lobby-handle.js';
export { type Build, type LogCallback, LoggingSeverity } from './logging.js';
export { DisclosureTypes, MessageHandle } from './messages/message-handle.js';
export type {
  MessageCreatedCallback,
  MessageDeletedCallback,
  MessageUpdatedCallback,
} from './messages/messages.js';
export { UserMessageSummary } from './messages/messages.js';
export {
  type GetUserApplicationProfilesCallback,
  UserApplicationProfileHandle,
} from './provisional/application-profiles.js';
export { AuthenticationExternalAuthType } from './provisional/provisional.js';
export type { RedirectContext, RedirectReceiver, RedirectStrategy } from './redirect.js';
export type { FetchLike } from './rest/rest-client.js';
export {
  Activity,
  ActivityActionTypes,
  ActivityAssets,
  ActivityGamePlatforms,
  ActivityInvite,
  ActivityParty,
  ActivityPartyPrivacy,
  ActivitySecrets,
  ActivityTimestamps,
  ActivityTypes,
} from './social/activity.js';
export type {
  AcceptActivityInviteCallback,
  ActivityInviteCallback,
  ActivityJoinCallback,
  RelationshipCallback,
  UserUpdatedCallback,
} from './social/social.js';
export { StatusType } from './social/status.js';
export { RelationshipHandle, RelationshipType, UserHandle } from './user-handle.js';
export {
  type AudioSink,
  type AudioSource,
  PushAudioSource,
  type UserAudioCapturedCallback,
  type UserAudioReceivedCallback,
} from './voice/audio.js';
export { Call } from './voice/call.js';
export {
  CallError,
  CallStatus,
  type CallStatusChangedCallback,
  type ParticipantChangedCallback,
  type SpeakingStatusChangedCallback,
  type VoiceStateChangedCallback,
  VoiceStateHandle,
} from './voice/call-status.js';
export { AudioSystem, ClientCreateOptions } from './voice/client-create-options.js';
export type { DaveCommitWelcome, DaveProvider, DaveSessionLike, MaybePromise } from './voice/dave.js';
export { type TsMlsDaveOptions, tsMlsDave } from './voice/dave-ts.js';
export { AudioModeType } from './voice/gate.js';
export type { OpusCodec, UdpSocketLike, VoiceNetwork, VoiceSocketLike } from './voice/network.js';
export { VADThresholdSettings } from './voice/vad.js';
