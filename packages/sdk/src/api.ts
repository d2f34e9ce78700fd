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
export { LobbyHandle, LobbyMemberHandle } from './lobbies/lobby-handle.js';
export { type Build, type LogCallback, LoggingSeverity } from './logging.js';
export { MessageHandle } from './messages/message-handle.js';
export type { MessageCallback, MessageDeletedCallback } from './messages/message-store.js';
export { AuthenticationExternalAuthType } from './provisional/provisional.js';
export type { RedirectContext, RedirectReceiver, RedirectStrategy } from './redirect.js';
export type { FetchLike } from './rest/rest-client.js';
export { UserHandle } from './user-handle.js';
