import {
  DEFAULT_COMMUNICATION_SCOPES,
  DEFAULT_PRESENCE_SCOPES,
  Limits,
  OAuth2ErrorCodes,
  parseLaunchCommand,
  SDK_VERSION_HEADER,
  SDK_VERSION_IDENTIFY_PROPERTY,
} from '@hearth/protocol';
import {
  type AuthorizationArgs,
  AuthorizationCodeVerifier,
  AuthorizationTokenType,
  toUint64,
} from './authorization.js';
import { ClientResult, ErrorType, type ResultCallback } from './client-result.js';
import type { FeatureContext } from './feature.js';
import { GatewayClient } from './gateway/gateway-client.js';
import type { SocketOpener, WebSocketConstructor } from './gateway/socket.js';
import { ClientError, ClientStatus, nameOf, type StatusChangedCallback } from './gateway/status.js';
import {
  type GetGuildChannelsCallback,
  type GetUserGuildsCallback,
  type GuildChannel,
  type GuildMinimal,
  Guilds,
} from './guilds/guilds.js';
import { snowflakeOf } from './ids.js';
import type { LaunchCommandStore, LaunchJoin } from './launch/launch-commands.js';
import {
  type CreateOrJoinLobbyCallback,
  type CreateOrJoinLobbyOutcome,
  type GetLobbyMessagesCallback,
  type GetLobbyMessagesOutcome,
  Lobbies,
  type LobbyCallback,
  type LobbyMemberCallback,
  type SendLobbyMessageCallback,
  type SendLobbyMessageOutcome,
} from './lobbies/lobbies.js';
import type { LobbyHandle } from './lobbies/lobby-handle.js';
import { type Build, type LogCallback, Logger, LoggingSeverity } from './logging.js';
import type { MessageHandle } from './messages/message-handle.js';
import {
  type MessageCreatedCallback,
  type MessageDeletedCallback,
  Messages,
  type MessageUpdatedCallback,
  type UserMessageSummary,
} from './messages/messages.js';
import {
  ApplicationProfiles,
  type GetUserApplicationProfilesCallback,
  type UserApplicationProfileHandle,
} from './provisional/application-profiles.js';
import { type AuthenticationExternalAuthType, ProvisionalAccounts } from './provisional/provisional.js';
import { customSchemeReceiver, type RedirectReceiver, type RedirectStrategy } from './redirect.js';
import {
  type FetchLike,
  type RestAnswer,
  RestClient,
  RestFailure,
  type RestRequest,
} from './rest/rest-client.js';
import { base64url, randomBytes } from './sha256.js';
import { type Activity, ActivityActionTypes, type ActivityInvite } from './social/activity.js';
import {
  type AcceptActivityInviteCallback,
  type ActivityInviteCallback,
  type ActivityJoinCallback,
  type RelationshipCallback,
  Social,
  type UserUpdatedCallback,
} from './social/social.js';
import type { StatusType } from './social/status.js';
import {
  noTokens,
  reportTokens,
  type TokenBody,
  type TokenExchangeCallback,
  type TokenOutcome,
  tokensOf,
} from './tokens.js';
import { type RelationshipHandle, UserHandle } from './user-handle.js';
import { SDK_VERSION, SDK_VERSION_STRING } from './version.js';
import type { UserAudioCapturedCallback, UserAudioReceivedCallback } from './voice/audio.js';
import type { Call } from './voice/call.js';
import { ClientCreateOptions } from './voice/client-create-options.js';
import type { VoiceNetwork } from './voice/network.js';
import { Voice } from './voice/voice.js';

/** Opens the authorization URL for the player: a browser, a webview, or a test's headless page. */
export type Opener = (url: string) => void | Promise<void>;

export interface ClientOptions {
  fetch?: FetchLike;
  opener?: Opener;
  /** How the player comes back: a loopback listener (desktop) or a custom scheme (mobile). */
  redirect?: RedirectStrategy;
  /** `release` logs Error and Warning only; `debug` also Info and Verbose. */
  build?: Build;
  /** The gateway's WebSocket; default: the `ws` package on Node, `globalThis.WebSocket` in browsers. */
  webSocket?: WebSocketConstructor;
  /**
   * The local agent's launch-command registry (RegisterLaunchCommand); default: `HEARTH_LAUNCH_COMMANDS_DIR`,
   * else the user's configuration folder. Node only.
   */
  launchCommandsDir?: string;
  /**
   * What calls run on (voice gateway socket, UDP, ciphers, Opus, DAVE). Default: Node's on the Node entry;
   * in browsers a WebRTC data channel for the datagrams, and DAVE on `ts-mls` (`browserVoiceNetwork`).
   */
  voiceNetwork?: VoiceNetwork;
  /** The Social SDK's ClientCreateOptions, carried; see the class for what applies in JavaScript. */
  createOptions?: ClientCreateOptions;
}

/** What an entry (Node, browser) supplies that the options leave open. */
export interface ClientEnvironment {
  opener: Opener;
  redirect: RedirectStrategy;
  /** Looked up when a connection opens: a browser-like runtime may lack one, which is then a status error. */
  webSocket: () => WebSocketConstructor | undefined;
  /** `properties.os` of the gateway Identify. */
  os: string;
  /** Where RegisterLaunchCommand writes; absent where no program can be launched (browsers). */
  launchCommands?: (dir: string | undefined) => LaunchCommandStore;
  /** The join this process was launched for by the local agent, if any. */
  launchJoin?: () => LaunchJoin | undefined;
  /** The voice network; absent where calls cannot run. */
  voice?: () => VoiceNetwork;
  /** Appends one voice log line to a file in the SetVoiceLogDir directory; absent without a file system. */
  voiceLogWriter?: (dir: string) => (line: string) => void;
}

/** The options with every default filled in. */
export interface ClientSettings {
  fetch: FetchLike;
  opener: Opener;
  redirect: RedirectStrategy;
  build: Build;
  openSocket: SocketOpener;
  os: string;
  launchCommands: LaunchCommandStore | undefined;
  launchJoin: LaunchJoin | undefined;
  voice: VoiceNetwork | undefined;
  voiceLogWriter: ((dir: string) => (line: string) => void) | undefined;
  createOptions: ClientCreateOptions;
}

export type AuthorizationCallback = (result: ClientResult, code: string, redirectUri: string) => void;
export type ExchangeChildTokenCallback = (
  result: ClientResult,
  accessToken: string,
  tokenType: AuthorizationTokenType,
  expiresIn: number,
  scopes: string,
) => void;
export type { ResultCallback } from './client-result.js';
export type { TokenExchangeCallback, TokenOutcome } from './tokens.js';
/**
 * AUTHORIZE_REQUEST: an entry point inside the platform client asks the game to authorize the player. The
 * game answers by calling Authorize, with these scopes or its own.
 */
export type AuthorizeRequestCallback = (applicationId: bigint, scopes: string) => void;

export interface AuthorizationOutcome {
  result: ClientResult;
  code: string;
  redirectUri: string;
}

export interface ChildTokenOutcome {
  result: ClientResult;
  accessToken: string;
  tokenType: AuthorizationTokenType;
  expiresIn: number;
  scopes: string;
}

const DEFAULT_API_BASE = 'http://127.0.0.1:8080/api';
const DEFAULT_WEB_BASE = 'http://127.0.0.1:8080';
const API_VERSION = 10;

/**
 * The game's connection to the platform (namespace sdkpp). Every operation takes the callback the spec
 * implies and also returns a Promise of the same values; neither rejects: failures arrive as a ClientResult.
 */
export class ClientCore {
  /** `openid sdk.social_layer` (seed, AuthorizationArgs rule 1). */
  static GetDefaultCommunicationScopes(): string {
    return DEFAULT_COMMUNICATION_SCOPES;
  }

  /** This library's version, major.minor.build: the major (seed: Versioning). */
  static GetVersionMajor(): number {
    return SDK_VERSION.major;
  }

  static GetVersionMinor(): number {
    return SDK_VERSION.minor;
  }

  /** The build number, the third part of the version. */
  static GetVersionPatch(): number {
    return SDK_VERSION.build;
  }

  /** `openid sdk.social_layer_presence` (seed, AuthorizationArgs rule 1). */
  static GetDefaultPresenceScopes(): string {
    return DEFAULT_PRESENCE_SCOPES;
  }

  /** Client::Status: `Client.Status.Ready` and the others. */
  static readonly Status = ClientStatus;

  /** Client::Error: the `error` argument of the status callback. */
  static readonly Error = ClientError;

  static StatusToString(status: ClientStatus): string {
    return nameOf(ClientStatus, status);
  }

  static ErrorToString(error: ClientError): string {
    return nameOf(ClientError, error);
  }

  readonly #webBase: string;
  readonly #rest: RestClient;
  readonly #logger: Logger;
  readonly #opener: Opener;
  readonly #redirect: RedirectStrategy;
  #applicationId = 0n;
  #timeoutMs: number = Limits.sdkHttpRequestTimeoutMs;
  #token: { type: AuthorizationTokenType; value: string } | undefined;
  #authorizing: { receiver: RedirectReceiver; abort: () => void } | undefined;
  readonly #gateway: GatewayClient;
  #statusChanged: StatusChangedCallback | undefined;
  #authorizeRequest: AuthorizeRequestCallback | undefined;
  readonly #listeners = new Map<string, Array<(data: unknown) => void>>();
  readonly #lobbies: Lobbies;
  readonly #launchCommands: LaunchCommandStore | undefined;
  #launchJoin: LaunchJoin | undefined;
  /** Handed to the library's feature modules. */
  protected readonly feature: FeatureContext;

  protected constructor(apiBase: string | undefined, webBase: string | undefined, options: ClientSettings) {
    this.#webBase = (webBase ?? DEFAULT_WEB_BASE).replace(/\/+$/, '');
    this.#logger = new Logger(options.build);
    this.#opener = options.opener;
    this.#redirect = options.redirect;
    this.#rest = new RestClient({
      apiBase: `${(apiBase ?? DEFAULT_API_BASE).replace(/\/+$/, '')}/v${API_VERSION}`,
      fetch: options.fetch,
      timeoutMs: () => this.#timeoutMs,
      logger: this.#logger,
      headers: { [SDK_VERSION_HEADER]: SDK_VERSION_STRING },
    });
    this.#gateway = new GatewayClient({
      open: options.openSocket,
      logger: this.#logger,
      locate: async () => {
        const answer = await this.#call({ method: 'GET', path: '/gateway' });
        const url = (answer.body as { url?: unknown } | undefined)?.url;
        if (typeof url !== 'string') throw new Error('GET /gateway answered no url');
        return url;
      },
      identifyToken: () => {
        const token = this.#token;
        if (!token) return undefined;
        // Players identify with their OAuth2 token as `Bearer <token>` (PROTOCOL.md §B.7).
        return token.type === AuthorizationTokenType.Bearer ? `Bearer ${token.value}` : token.value;
      },
      properties: {
        os: options.os,
        browser: 'hearth-sdk',
        device: 'hearth-sdk',
        [SDK_VERSION_IDENTIFY_PROPERTY]: SDK_VERSION_STRING,
      },
      onStatus: (status, error, errorDetail) => this.#reportStatus(status, error, errorDetail),
      onDispatch: (event, data) => this.#onDispatch(event, data),
    });
    this.feature = {
      call: (request) => this.authenticatedCall(request),
      on: (event, listener) => {
        const listeners = this.#listeners.get(event) ?? [];
        listeners.push(listener);
        this.#listeners.set(event, listeners);
      },
      logger: this.#logger,
      currentUserId: () => this.#gateway.user?.id,
      applicationId: () => this.#applicationId,
      send: (op, d) => this.#gateway.send(op, d),
    };
    this.feature.on('AUTHORIZE_REQUEST', (data) => this.#onAuthorizeRequest(data));
    this.#social = new Social(this.feature);
    this.#messages = new Messages(this.feature);
    this.#guilds = new Guilds(this.feature);
    this.#applicationProfiles = new ApplicationProfiles(this.feature);
    this.#lobbies = new Lobbies(this.feature, this.#messages);
    this.#voice = new Voice(this.feature, options.voice);
    this.#voiceLogWriter = options.voiceLogWriter;
    this.#createOptions = options.createOptions;
    this.#launchCommands = options.launchCommands;
    this.#launchJoin = options.launchJoin;
    this.feature.on('READY', () => this.#joinLaunched());
  }

  // ---- Configuration ----

  /** The default ClientId of AuthorizationArgs. */
  SetApplicationId(applicationId: bigint | string): void {
    this.#applicationId = toUint64(applicationId, 'applicationId');
  }

  GetApplicationId(): bigint {
    return this.#applicationId;
  }

  /** The timeout of every HTTP request the library makes; 30000 ms by default (seed, Limits). */
  SetHttpRequestTimeout(httpTimeoutInMilliseconds: number): void {
    if (!Number.isInteger(httpTimeoutInMilliseconds) || httpTimeoutInMilliseconds <= 0) {
      throw new RangeError('the HTTP request timeout must be a positive whole number of milliseconds');
    }
    this.#timeoutMs = httpTimeoutInMilliseconds;
  }

  GetHttpRequestTimeout(): number {
    return this.#timeoutMs;
  }

  AddLogCallback(callback: LogCallback, minSeverity: LoggingSeverity): void {
    this.#logger.add(callback, minSeverity);
  }

  RemoveLogCallback(callback: LogCallback): void {
    this.#logger.remove(callback);
  }

  // ---- Connection ----

  /**
   * Connects to the gateway with the token given to UpdateToken. Progress and failures arrive through
   * SetStatusChangedCallback: Connecting, Connected, then Ready; without a token, Disconnected with
   * `Client.Error.ConnectionFailed`.
   */
  Connect(): void {
    this.#gateway.connect();
  }

  /** Ends the connection and its session: Disconnecting, then Disconnected. */
  Disconnect(): void {
    this.#gateway.disconnect();
  }

  GetStatus(): ClientStatus {
    return this.#gateway.status;
  }

  /** One callback, replaced by the next call; `errorDetail` is the gateway's close code when there is one. */
  SetStatusChangedCallback(callback: StatusChangedCallback): void {
    this.#statusChanged = callback;
  }

  /** The player this client is connected as; undefined unless the client is Ready (seed, Library operations). */
  GetCurrentUserV2(): UserHandle | undefined {
    const user = this.#gateway.user;
    return user ? new UserHandle(user) : undefined;
  }

  /**
   * Called on AUTHORIZE_REQUEST. The callback belongs to the client, not to a connection: every connection
   * after a reconnect, resumed or identified anew, delivers to it (seed, Events: re-subscribed after a reconnect).
   */
  RegisterAuthorizeRequestCallback(callback: AuthorizeRequestCallback): void {
    this.#authorizeRequest = callback;
  }

  RemoveAuthorizeRequestCallback(): void {
    this.#authorizeRequest = undefined;
  }

  // ---- Launch commands ----

  /**
   * Registers, on this machine, the command by which the platform client (the local agent) launches the
   * game when the player accepts an invite to it: an absolute executable path and its arguments (seed,
   * Library operations). True when registered; why not is logged. The launched game gets the invite's
   * join secret at SetActivityJoinCallback once Ready.
   */
  RegisterLaunchCommand(applicationId: bigint | string, command: string): boolean {
    let id: bigint;
    try {
      id = toUint64(applicationId, 'applicationId');
    } catch {
      id = 0n;
    }
    const refuse = (reason: string) => {
      this.#logger.log(LoggingSeverity.Warning, `RegisterLaunchCommand refused: ${reason}`);
      return false;
    };
    if (id === 0n) return refuse('applicationId must be a non-zero unsigned 64-bit integer');
    if (typeof command !== 'string') return refuse('the command must be a string');
    const parsed = parseLaunchCommand(command);
    if (!parsed.ok) return refuse(parsed.reason);
    if (!this.#launchCommands) return refuse('this environment cannot launch programs');
    const problem = this.#launchCommands.register({
      application_id: id.toString(),
      command,
      argv: parsed.argv,
    });
    return problem === undefined ? true : refuse(problem);
  }

  /** A game launched to join a party joins it at its first Ready, for the application it was launched for. */
  #joinLaunched(): void {
    const join = this.#launchJoin;
    if (!join || join.applicationId !== this.#applicationId.toString()) return;
    this.#launchJoin = undefined;
    this.#social.joinLaunched(join.secret);
  }

  #reportStatus(status: ClientStatus, error: ClientError, errorDetail: number): void {
    try {
      this.#statusChanged?.(status, error, errorDetail);
    } catch (thrown) {
      // A game's callback must not break the connection's state machine.
      this.#logger.log(LoggingSeverity.Error, `the status callback threw: ${String(thrown)}`);
    }
  }

  #onDispatch(event: string, data: unknown): void {
    for (const listener of this.#listeners.get(event) ?? []) {
      try {
        listener(data);
      } catch (thrown) {
        // A game's callback (or a malformed dispatch) must not throw into the socket's event handler.
        this.#logger.log(LoggingSeverity.Error, `the ${event} handler threw: ${String(thrown)}`);
      }
    }
  }

  #onAuthorizeRequest(data: unknown): void {
    const callback = this.#authorizeRequest;
    const request = data as { application_id?: unknown; scopes?: unknown } | null;
    const applicationId = request?.application_id;
    // A malformed dispatch is dropped here: it must not throw into the socket's event handler.
    if (!callback || typeof applicationId !== 'string' || !/^\d{1,20}$/.test(applicationId)) return;
    try {
      callback(
        BigInt(applicationId),
        typeof request?.scopes === 'string' ? request.scopes : DEFAULT_COMMUNICATION_SCOPES,
      );
    } catch (thrown) {
      this.#logger.log(LoggingSeverity.Error, `the authorize request callback threw: ${String(thrown)}`);
    }
  }

  // ---- Authorization ----

  /** A fresh PKCE verifier and challenge (RFC 7636, S256). */
  CreateAuthorizationCodeVerifier(): AuthorizationCodeVerifier {
    return AuthorizationCodeVerifier.Create();
  }

  /**
   * Starts OAuth2 authorization of the player: opens the authorization page, waits for the redirect,
   * checks `state`, and reports the code with the redirect URI to pass to GetToken.
   */
  async Authorize(args: AuthorizationArgs, callback?: AuthorizationCallback): Promise<AuthorizationOutcome> {
    const outcome = await this.#authorize(args);
    callback?.(outcome.result, outcome.code, outcome.redirectUri);
    return outcome;
  }

  /** Ends an authorization in progress; it reports ErrorType.Aborted. */
  AbortAuthorize(): void {
    this.#authorizing?.abort();
  }

  /** Hands a custom-scheme redirect to the authorization waiting for it; true when it was taken. */
  HandleAuthorizeRedirect(url: string): boolean {
    return this.#authorizing?.receiver.offer(url) ?? false;
  }

  async #authorize(args: AuthorizationArgs): Promise<AuthorizationOutcome> {
    const refuse = (error: string) => ({
      result: new ClientResult({ type: ErrorType.ValidationError, error }),
      code: '',
      redirectUri: '',
    });
    if (!args.IsValid()) return refuse('AuthorizationArgs is uninitialized');
    if (args.Scopes().trim() === '') return refuse('Scopes is required');
    const applicationId = args.ClientId() !== 0n ? args.ClientId() : this.#applicationId;
    if (applicationId === 0n)
      return refuse('no ClientId: call SetApplicationId or AuthorizationArgs.SetClientId');
    if (this.#authorizing) return refuse('an authorization is already in progress');

    const receiver = await this.#redirect({ applicationId, customSchemeParam: args.CustomSchemeParam() });
    let abort: () => void = () => undefined;
    const aborted = new Promise<'aborted'>((resolve) => {
      abort = () => resolve('aborted');
    });
    this.#authorizing = { receiver, abort };
    const state = args.State() ?? base64url(randomBytes(32));
    const url = this.#authorizeUrl(args, applicationId, state, receiver.redirectUri);
    try {
      this.#logger.log(
        LoggingSeverity.Info,
        `authorizing application ${applicationId} at ${this.#webBase}/oauth2/authorize`,
      );
      await this.#opener(url);
      const returned = await Promise.race([receiver.wait(), aborted]);
      const fail = (type: ErrorType, error: string) => ({
        result: new ClientResult({ type, error }),
        code: '',
        redirectUri: receiver.redirectUri,
      });
      if (returned === 'aborted') return fail(ErrorType.Aborted, 'authorization aborted');
      // RFC 6749 §10.12: a redirect that does not carry our state is not an answer to our request.
      if (returned.searchParams.get('state') !== state)
        return fail(ErrorType.AuthorizationFailed, 'state mismatch');
      const error = returned.searchParams.get('error');
      if (error === OAuth2ErrorCodes.AccessDenied) return fail(ErrorType.Aborted, error);
      if (error !== null) {
        const description = returned.searchParams.get('error_description');
        return fail(ErrorType.AuthorizationFailed, description ? `${error}: ${description}` : error);
      }
      const code = returned.searchParams.get('code');
      if (!code) return fail(ErrorType.AuthorizationFailed, 'the redirect carried no code');
      return { result: ClientResult.success(), code, redirectUri: receiver.redirectUri };
    } catch (error) {
      return {
        result: new ClientResult({
          type: ErrorType.AuthorizationFailed,
          error: String((error as Error).message ?? error),
        }),
        code: '',
        redirectUri: receiver.redirectUri,
      };
    } finally {
      this.#authorizing = undefined;
      await receiver.close();
    }
  }

  #authorizeUrl(args: AuthorizationArgs, applicationId: bigint, state: string, redirectUri: string): string {
    const params = new URLSearchParams({
      client_id: applicationId.toString(),
      response_type: 'code',
      scope: args.Scopes(),
      state,
      redirect_uri: redirectUri,
    });
    const nonce = args.Nonce();
    if (nonce !== undefined) params.set('nonce', nonce);
    const challenge = args.CodeChallenge();
    if (challenge) {
      params.set('code_challenge', challenge.Challenge());
      params.set('code_challenge_method', challenge.Method());
    }
    const integrationType = args.IntegrationType();
    if (integrationType !== undefined) params.set('integration_type', String(integrationType));
    return `${this.#webBase}/oauth2/authorize?${params}`;
  }

  // ---- Tokens ----

  /** Exchanges an authorization code and its PKCE verifier for tokens (public clients: no secret). */
  async GetToken(
    applicationId: bigint | string,
    code: string,
    codeVerifier: string,
    redirectUri: string,
    callback?: TokenExchangeCallback,
  ): Promise<TokenOutcome> {
    return this.#tokens(
      applicationId,
      { grant_type: 'authorization_code', code, code_verifier: codeVerifier, redirect_uri: redirectUri },
      callback,
    );
  }

  /** Trades a refresh token for a new pair. `invalid_grant` means the link is gone: treat it as deauthorization. */
  async RefreshToken(
    applicationId: bigint | string,
    refreshToken: string,
    callback?: TokenExchangeCallback,
  ): Promise<TokenOutcome> {
    this.#logger.secret(refreshToken);
    return this.#tokens(
      applicationId,
      { grant_type: 'refresh_token', refresh_token: refreshToken },
      callback,
    );
  }

  /** The token the library authenticates with from now on (after a refresh or re-authentication). */
  async UpdateToken(
    tokenType: AuthorizationTokenType,
    token: string,
    callback?: ResultCallback,
  ): Promise<ClientResult> {
    let result: ClientResult;
    if (token.trim() === '') {
      result = new ClientResult({ type: ErrorType.ValidationError, error: 'token is empty' });
    } else {
      this.#logger.secret(token);
      this.#token = { type: tokenType, value: token };
      result = ClientResult.success();
    }
    callback?.(result);
    return result;
  }

  /** Revokes a token: every token of that application for this player ends (public clients may call it). */
  async RevokeToken(
    applicationId: bigint | string,
    token: string,
    callback?: ResultCallback,
  ): Promise<ClientResult> {
    this.#logger.secret(token);
    const clientId = snowflakeOf(applicationId, 'applicationId');
    const result =
      clientId instanceof ClientResult
        ? clientId
        : await this.#call({
            method: 'POST',
            path: '/oauth2/token/revoke',
            form: { token, client_id: clientId },
          }).then(
            () => ClientResult.success(),
            (failure: RestFailure) => failure.result,
          );
    if (this.#token?.value === token) this.#token = undefined;
    callback?.(result);
    return result;
  }

  /** Publisher-level linking: a parent application's token becomes a child application's (no refresh token). */
  async ExchangeChildToken(
    parentApplicationToken: string,
    childApplicationId: bigint | string,
    callback?: ExchangeChildTokenCallback,
  ): Promise<ChildTokenOutcome> {
    this.#logger.secret(parentApplicationToken);
    const childId = snowflakeOf(childApplicationId, 'childApplicationId');
    const answer =
      childId instanceof ClientResult
        ? new RestFailure(childId)
        : await this.#call({
            method: 'POST',
            path: '/partner-sdk/child-token',
            json: { parent_access_token: parentApplicationToken, child_application_id: childId },
          }).catch((failure: RestFailure) => failure);
    const outcome =
      answer instanceof RestFailure
        ? {
            result: answer.result,
            accessToken: '',
            tokenType: AuthorizationTokenType.Bearer,
            expiresIn: 0,
            scopes: '',
          }
        : this.#childOutcome(answer.body as TokenBody);
    callback?.(outcome.result, outcome.accessToken, outcome.tokenType, outcome.expiresIn, outcome.scopes);
    return outcome;
  }

  #childOutcome(body: TokenBody): ChildTokenOutcome {
    this.#logger.secret(body.access_token);
    return {
      result: ClientResult.success(),
      accessToken: body.access_token ?? '',
      tokenType: AuthorizationTokenType.Bearer,
      expiresIn: body.expires_in ?? 0,
      scopes: body.scope ?? '',
    };
  }

  /** The token endpoint for GetToken and RefreshToken: reports to the callback and resolves, never rejects. */
  async #tokens(
    applicationId: bigint | string,
    form: Record<string, string>,
    callback: TokenExchangeCallback | undefined,
  ): Promise<TokenOutcome> {
    const outcome = await this.#exchange(applicationId, form);
    reportTokens(callback, outcome);
    return outcome;
  }

  async #exchange(applicationId: bigint | string, fields: Record<string, string>): Promise<TokenOutcome> {
    const clientId = snowflakeOf(applicationId, 'applicationId');
    if (clientId instanceof ClientResult) return noTokens(clientId);
    const form = { ...fields, client_id: clientId };
    const answer = await this.#call({ method: 'POST', path: '/oauth2/token', form }).catch(
      (failure: RestFailure) => failure,
    );
    if (answer instanceof RestFailure) {
      const failed = answer.result;
      // An OAuth2 refusal of the grant (deleted token, ban) is the server's authorization answer.
      return noTokens(
        failed.Status() === 400 || failed.Status() === 401
          ? new ClientResult({
              type: ErrorType.AuthorizationFailed,
              error: failed.Error(),
              status: failed.Status(),
              responseBody: failed.ResponseBody(),
            })
          : failed,
      );
    }
    return tokensOf(answer.body as TokenBody, answer.status, this.#logger);
  }

  // ---- Lobbies ----

  /**
   * Joins the lobby of this secret, creating it when there is none; the secret is the game's (≤ 250
   * characters, unique per game, admitting new members for 30 days). Lobbies made by the game's backend
   * cannot be joined or left this way.
   */
  async CreateOrJoinLobby(
    secret: string,
    callback?: CreateOrJoinLobbyCallback,
  ): Promise<CreateOrJoinLobbyOutcome> {
    return this.CreateOrJoinLobbyWithMetadata(secret, {}, {}, callback);
  }

  /** CreateOrJoinLobby that also sets the lobby's metadata and the player's member metadata (overwriting). */
  async CreateOrJoinLobbyWithMetadata(
    secret: string,
    lobbyMetadata: Record<string, string>,
    memberMetadata: Record<string, string>,
    callback?: CreateOrJoinLobbyCallback,
  ): Promise<CreateOrJoinLobbyOutcome> {
    const outcome = await this.#lobbies.createOrJoin(
      secret,
      Object.keys(lobbyMetadata).length > 0 ? lobbyMetadata : undefined,
      Object.keys(memberMetadata).length > 0 ? memberMetadata : undefined,
    );
    callback?.(outcome.result, outcome.lobbyId);
    return outcome;
  }

  async LeaveLobby(lobbyId: bigint | string, callback?: ResultCallback): Promise<ClientResult> {
    const result = await this.#lobbies.leave(lobbyId);
    callback?.(result);
    return result;
  }

  /** The lobby as last heard from the platform; undefined unless the player is in it. */
  GetLobbyHandle(lobbyId: bigint | string): LobbyHandle | undefined {
    return this.#lobbies.handle(lobbyId);
  }

  GetLobbyIds(): bigint[] {
    return this.#lobbies.ids();
  }

  async SendLobbyMessage(
    lobbyId: bigint | string,
    content: string,
    callback?: SendLobbyMessageCallback,
  ): Promise<SendLobbyMessageOutcome> {
    return this.SendLobbyMessageWithMetadata(lobbyId, content, {}, callback);
  }

  async SendLobbyMessageWithMetadata(
    lobbyId: bigint | string,
    content: string,
    metadata: Record<string, string>,
    callback?: SendLobbyMessageCallback,
  ): Promise<SendLobbyMessageOutcome> {
    const outcome = await this.#lobbies.send(
      lobbyId,
      content,
      Object.keys(metadata).length > 0 ? metadata : undefined,
    );
    callback?.(outcome.result, outcome.messageId);
    return outcome;
  }

  /** Lobby history, most recent first: at most 200 messages and at most 72 hours (seed). */
  async GetLobbyMessagesWithLimit(
    lobbyId: bigint | string,
    limit: number,
    callback?: GetLobbyMessagesCallback,
  ): Promise<GetLobbyMessagesOutcome> {
    const outcome = await this.#lobbies.history(lobbyId, limit);
    callback?.(outcome.result, outcome.messages);
    return outcome;
  }

  SetLobbyCreatedCallback(callback: LobbyCallback): void {
    this.#lobbies.created = callback;
  }

  SetLobbyUpdatedCallback(callback: LobbyCallback): void {
    this.#lobbies.updated = callback;
  }

  SetLobbyDeletedCallback(callback: LobbyCallback): void {
    this.#lobbies.deleted = callback;
  }

  SetLobbyMemberAddedCallback(callback: LobbyMemberCallback): void {
    this.#lobbies.memberAdded = callback;
  }

  SetLobbyMemberUpdatedCallback(callback: LobbyMemberCallback): void {
    this.#lobbies.memberUpdated = callback;
  }

  SetLobbyMemberRemovedCallback(callback: LobbyMemberCallback): void {
    this.#lobbies.memberRemoved = callback;
  }

  // ---- Voice calls ----

  readonly #voice: Voice;
  readonly #voiceLogWriter: ((dir: string) => (line: string) => void) | undefined;
  readonly #createOptions: ClientCreateOptions;
  #engineManagedAudioSession = false;
  #aecDump = false;
  #voiceLog: LogCallback | undefined;

  /**
   * Joins the lobby's voice call; the Call reports its progress at SetStatusChangedCallback and is usable
   * once Connected. Undefined when the client is not Ready, the id is not a lobby id, or this environment
   * cannot run calls: browsers have no UDP socket and the platform has no browser media path (logged).
   * Audio comes from `Call.SetAudioSource` and goes to `Call.SetAudioSink`.
   */
  StartCall(lobbyId: bigint | string): Call | undefined {
    return this.#voice.start(String(lobbyId), undefined, undefined);
  }

  /**
   * StartCall with the two audio callbacks: `receivedCb` gets every decoded 20 ms frame of each participant
   * before mixing, `capturedCb` every captured frame before it is sent (48 kHz, 2 channels, 960 samples per
   * channel). Both may change the samples in place; returning true mutes that frame.
   */
  StartCallWithAudioCallbacks(
    lobbyId: bigint | string,
    receivedCb: UserAudioReceivedCallback,
    capturedCb: UserAudioCapturedCallback,
  ): Call | undefined {
    return this.#voice.start(String(lobbyId), receivedCb, capturedCb);
  }

  /** Leaves one call; the callback runs once it is Disconnected (at once when there was no such call). */
  EndCall(channelId: bigint | string, callback?: () => void): void {
    this.#voice.end(String(channelId));
    callback?.();
  }

  /** Leaves every call. */
  EndCalls(callback?: () => void): void {
    for (const call of this.#voice.all()) this.#voice.end(call.GetChannelId().toString());
    callback?.();
  }

  GetCall(channelId: bigint | string): Call | undefined {
    return this.#voice.get(String(channelId));
  }

  GetCalls(): Call[] {
    return this.#voice.all();
  }

  /**
   * Writes the library's log lines of at least `minSeverity` to `voice.log` in this directory (the native
   * engine's voice logs; this library logs calls through its logger). Not applicable in browsers (no file
   * system): logged as a warning and ignored.
   */
  SetVoiceLogDir(path: string, minSeverity: LoggingSeverity): void {
    if (this.#voiceLog) this.#logger.remove(this.#voiceLog);
    this.#voiceLog = undefined;
    if (!this.#voiceLogWriter) {
      this.#logger.log(LoggingSeverity.Warning, 'SetVoiceLogDir: this environment has no file system');
      return;
    }
    const write = this.#voiceLogWriter(path);
    this.#voiceLog = (message, severity) => write(`${new Date().toISOString()} ${severity} ${message}`);
    this.#logger.add(this.#voiceLog, minSeverity);
  }

  /**
   * Whether the game manages the audio session and routing (iOS/Android) itself. Carried only: this library
   * never touches the audio session; the game owns all audio I/O through the call's source and sink.
   */
  SetEngineManagedAudioSession(isEngineManaged: boolean): void {
    this.#engineManagedAudioSession = isEngineManaged;
  }

  GetEngineManagedAudioSession(): boolean {
    return this.#engineManagedAudioSession;
  }

  /**
   * Records the echo canceller's diagnostics. Not applicable: this library has no echo canceller (the game's
   * audio path does its own processing); the flag is carried only.
   */
  SetAecDump(on: boolean): void {
    this.#aecDump = on;
  }

  GetAecDump(): boolean {
    return this.#aecDump;
  }

  /** The ClientCreateOptions this client was created with. */
  GetClientCreateOptions(): ClientCreateOptions {
    return this.#createOptions;
  }

  // ---- Provisional accounts ----

  #provisionalAccounts: ProvisionalAccounts | undefined;

  get #provisional(): ProvisionalAccounts {
    this.#provisionalAccounts ??= new ProvisionalAccounts({
      feature: this.feature,
      anonymous: (request) => this.#call(request),
    });
    return this.#provisionalAccounts;
  }

  /** A provisional account's token from an external credential (seed, Authentication 5). */
  GetProvisionalToken(
    applicationId: bigint | string,
    externalAuthType: AuthenticationExternalAuthType,
    externalAuthToken: string,
    callback?: TokenExchangeCallback,
  ): Promise<TokenOutcome> {
    return this.#provisional.getProvisionalToken(
      applicationId,
      externalAuthType,
      externalAuthToken,
      callback,
    );
  }

  /** GetToken that also merges the player's provisional account into their full account. */
  GetTokenFromProvisionalMerge(
    applicationId: bigint | string,
    code: string,
    codeVerifier: string,
    redirectUri: string,
    externalAuthType: AuthenticationExternalAuthType,
    externalAuthToken: string,
    callback?: TokenExchangeCallback,
  ): Promise<TokenOutcome> {
    return this.#provisional.getTokenFromProvisionalMerge(
      applicationId,
      code,
      codeVerifier,
      redirectUri,
      externalAuthType,
      externalAuthToken,
      callback,
    );
  }

  /** Unlinks the player: a new provisional account takes the external identity (public clients may call it). */
  UnmergeIntoProvisionalAccount(
    applicationId: bigint | string,
    externalAuthType: AuthenticationExternalAuthType,
    externalAuthToken: string,
    callback?: ResultCallback,
  ): Promise<ClientResult> {
    return this.#provisional.unmergeIntoProvisionalAccount(
      applicationId,
      externalAuthType,
      externalAuthToken,
      callback,
    );
  }

  /** Names the provisional player (1–32 characters). */
  UpdateProvisionalAccountDisplayName(name: string, callback?: ResultCallback): Promise<ClientResult> {
    return this.#provisional.updateDisplayName(name, callback);
  }

  /** A request authenticated with the token given to UpdateToken, if any. */
  protected async authenticatedCall(request: RestRequest): Promise<RestAnswer> {
    const token = this.#token;
    return this.#call({
      ...request,
      ...(token
        ? {
            authorization:
              token.type === AuthorizationTokenType.Bearer ? `Bearer ${token.value}` : token.value,
          }
        : {}),
    });
  }

  #call(request: RestRequest): Promise<RestAnswer> {
    return this.#rest.request(request);
  }

  // ---- Social layer: relationships, presence, activity invites, direct messages ----

  readonly #social: Social;
  readonly #messages: Messages;
  readonly #guilds: Guilds;
  readonly #applicationProfiles: ApplicationProfiles;

  /** Every platform and game relationship of the player (PROTOCOL.md §B.6). */
  async GetRelationships(
    callback?: (relationships: RelationshipHandle[]) => void,
  ): Promise<RelationshipHandle[]> {
    const relationships = await this.#social.getRelationships();
    callback?.(relationships);
    return relationships;
  }

  GetRelationshipHandle(userId: bigint | string): RelationshipHandle {
    return this.#social.relationship(String(userId));
  }

  /** A user the library knows (a relationship), with their status and activity. */
  GetUser(userId: bigint | string): UserHandle | undefined {
    return this.#social.user(String(userId));
  }

  SendFriendRequest(username: string, callback?: ResultCallback): Promise<ClientResult> {
    return reported(this.#social.sendFriendRequest(username, false), callback);
  }

  SendFriendRequestById(userId: bigint | string, callback?: ResultCallback): Promise<ClientResult> {
    return reported(this.#social.sendFriendRequestById(userId, false), callback);
  }

  SendGameFriendRequest(username: string, callback?: ResultCallback): Promise<ClientResult> {
    return reported(this.#social.sendFriendRequest(username, true), callback);
  }

  SendGameFriendRequestById(userId: bigint | string, callback?: ResultCallback): Promise<ClientResult> {
    return reported(this.#social.sendFriendRequestById(userId, true), callback);
  }

  AcceptFriendRequest(userId: bigint | string, callback?: ResultCallback): Promise<ClientResult> {
    return reported(this.#social.acceptFriendRequest(userId), callback);
  }

  RejectFriendRequest(userId: bigint | string, callback?: ResultCallback): Promise<ClientResult> {
    return reported(this.#social.rejectFriendRequest(userId), callback);
  }

  RemoveFriend(userId: bigint | string, callback?: ResultCallback): Promise<ClientResult> {
    return reported(this.#social.removeFriend(userId), callback);
  }

  BlockUser(userId: bigint | string, callback?: ResultCallback): Promise<ClientResult> {
    return reported(this.#social.blockUser(userId), callback);
  }

  UnblockUser(userId: bigint | string, callback?: ResultCallback): Promise<ClientResult> {
    return reported(this.#social.unblockUser(userId), callback);
  }

  SetRelationshipCreatedCallback(callback: RelationshipCallback): void {
    this.#social.setRelationshipCreatedCallback(callback);
  }

  SetRelationshipDeletedCallback(callback: RelationshipCallback): void {
    this.#social.setRelationshipDeletedCallback(callback);
  }

  /** A user's presence or activity changed. */
  SetUserUpdatedCallback(callback: UserUpdatedCallback): void {
    this.#social.setUserUpdatedCallback(callback);
  }

  /** Sets the player's rich presence; 5 updates per 20 s (PROTOCOL.md §B.8). */
  UpdateRichPresence(activity: Activity, callback?: ResultCallback): Promise<ClientResult> {
    return reported(Promise.resolve(this.#social.updateRichPresence(activity)), callback);
  }

  ClearRichPresence(callback?: ResultCallback): Promise<ClientResult> {
    return reported(Promise.resolve(this.#social.updateRichPresence(undefined)), callback);
  }

  /** Online, Idle, Dnd or Invisible (seen by others as Offline). */
  SetOnlineStatus(status: StatusType, callback?: ResultCallback): Promise<ClientResult> {
    return reported(Promise.resolve(this.#social.setOnlineStatus(status)), callback);
  }

  /** Invites a user to the party of the player's rich presence, with a message (PROTOCOL.md §B.9). */
  SendActivityInvite(
    userId: bigint | string,
    content: string,
    callback?: ResultCallback,
  ): Promise<ClientResult> {
    return reported(this.#social.sendActivityInvite(userId, ActivityActionTypes.Join, content), callback);
  }

  SendActivityJoinRequest(userId: bigint | string, callback?: ResultCallback): Promise<ClientResult> {
    return reported(this.#social.sendActivityInvite(userId, ActivityActionTypes.JoinRequest), callback);
  }

  /** Answers a join request with an invite to the player's party. */
  SendActivityJoinRequestReply(invite: ActivityInvite, callback?: ResultCallback): Promise<ClientResult> {
    return reported(this.#social.sendActivityInvite(invite.SenderId(), ActivityActionTypes.Join), callback);
  }

  /** Accepts an invite: the join secret arrives here and at SetActivityJoinCallback. */
  async AcceptActivityInvite(
    invite: ActivityInvite,
    callback?: AcceptActivityInviteCallback,
  ): Promise<{ result: ClientResult; joinSecret: string }> {
    const outcome = await this.#social.acceptActivityInvite(invite);
    callback?.(outcome.result, outcome.joinSecret);
    return outcome;
  }

  /** Invites and join requests received; also an invite accepted on another of the player's devices (seed). */
  SetActivityInviteCreatedCallback(callback: ActivityInviteCallback): void {
    this.#social.setActivityInviteCreatedCallback(callback);
  }

  SetActivityJoinCallback(callback: ActivityJoinCallback): void {
    this.#social.setActivityJoinCallback(callback);
  }

  async SendUserMessage(
    recipientId: bigint | string,
    content: string,
    callback?: (result: ClientResult, messageId: bigint) => void,
  ): Promise<{ result: ClientResult; messageId: bigint }> {
    const outcome = await this.#messages.sendUserMessage(recipientId, content);
    callback?.(outcome.result, outcome.messageId);
    return outcome;
  }

  async SendUserMessageWithMetadata(
    recipientId: bigint | string,
    content: string,
    metadata: Record<string, string>,
    callback?: (result: ClientResult, messageId: bigint) => void,
  ): Promise<{ result: ClientResult; messageId: bigint }> {
    const outcome = await this.#messages.sendUserMessage(recipientId, content, metadata);
    callback?.(outcome.result, outcome.messageId);
    return outcome;
  }

  /** Direct-message history, newest first; results are cached locally (seed). */
  async GetUserMessagesWithLimit(
    recipientId: bigint | string,
    limit: number,
    callback?: (result: ClientResult, messages: MessageHandle[]) => void,
  ): Promise<{ result: ClientResult; messages: MessageHandle[] }> {
    const outcome = await this.#messages.getUserMessagesWithLimit(recipientId, limit);
    callback?.(outcome.result, outcome.messages);
    return outcome;
  }

  /**
   * The player's game identities from the external identity providers of provisional accounts (seed:
   * Client::GetUserApplicationProfiles), one handle each; remembered for GetUserApplicationProfilesNoLock.
   */
  async GetUserApplicationProfiles(
    callback?: GetUserApplicationProfilesCallback,
  ): Promise<{ result: ClientResult; profiles: UserApplicationProfileHandle[] }> {
    const outcome = await this.#applicationProfiles.fetch();
    callback?.(outcome.result, outcome.profiles);
    return outcome;
  }

  /** The profiles the last GetUserApplicationProfiles answered, at once and without a request (seed). */
  GetUserApplicationProfilesNoLock(): UserApplicationProfileHandle[] {
    return this.#applicationProfiles.cached();
  }

  /** The guilds the player is in (seed: Client::GetUserGuilds; needs the `guilds` scope). */
  async GetUserGuilds(
    callback?: GetUserGuildsCallback,
  ): Promise<{ result: ClientResult; guilds: GuildMinimal[] }> {
    const outcome = await this.#guilds.getUserGuilds();
    callback?.(outcome.result, outcome.guilds);
    return outcome;
  }

  /**
   * The channels of one of the player's guilds, in the client's order: each with its type, position,
   * parent category, whether the player may link it, whether it is public, and its linked lobby (seed).
   */
  async GetGuildChannels(
    guildId: bigint | string,
    callback?: GetGuildChannelsCallback,
  ): Promise<{ result: ClientResult; channels: GuildChannel[] }> {
    const outcome = await this.#guilds.getGuildChannels(guildId);
    callback?.(outcome.result, outcome.channels);
    return outcome;
  }

  /** Links a guild text channel to a lobby, or changes the channel it is linked to (PROTOCOL.md §A.5). */
  async LinkChannelToLobby(
    lobbyId: bigint | string,
    channelId: bigint | string,
    callback?: ResultCallback,
  ): Promise<ClientResult> {
    const result = await this.#lobbies.setLinkedChannel(lobbyId, channelId);
    callback?.(result);
    return result;
  }

  /**
   * Invites the player into the guild of the lobby's linked channel: a single-use invite for them alone,
   * valid one hour, whose URL is opened (a console shows `inviteUrl` instead). A provisional account cannot
   * join a guild: `provisionalUserMergeRequired` is called and nothing is requested.
   */
  async JoinLinkedLobbyGuild(
    lobbyId: bigint | string,
    provisionalUserMergeRequired?: () => void,
    callback?: (result: ClientResult, inviteUrl: string) => void,
  ): Promise<{ result: ClientResult; inviteUrl: string }> {
    const outcome = await this.#joinLinkedLobbyGuild(lobbyId, provisionalUserMergeRequired);
    callback?.(outcome.result, outcome.inviteUrl);
    return outcome;
  }

  async #joinLinkedLobbyGuild(
    lobbyId: bigint | string,
    provisionalUserMergeRequired: (() => void) | undefined,
  ): Promise<{ result: ClientResult; inviteUrl: string }> {
    if (this.GetCurrentUserV2()?.IsProvisional()) {
      provisionalUserMergeRequired?.();
      const error = 'a provisional account must be merged into a full account to join a guild';
      return { result: new ClientResult({ type: ErrorType.ValidationError, error }), inviteUrl: '' };
    }
    const { result, code } = await this.#lobbies.channelInvite(lobbyId);
    if (!result.Successful()) return { result, inviteUrl: '' };
    const inviteUrl = `${this.#webBase}/invite/${code}`;
    try {
      await this.#opener(inviteUrl);
    } catch (error) {
      this.#logger.log(LoggingSeverity.Warning, `could not open the guild invite: ${String(error)}`);
    }
    return { result, inviteUrl };
  }

  /** Removes the lobby's linked channel; needs only the member flag CanLinkLobby. */
  async UnlinkChannelFromLobby(lobbyId: bigint | string, callback?: ResultCallback): Promise<ClientResult> {
    const result = await this.#lobbies.setLinkedChannel(lobbyId, null);
    callback?.(result);
    return result;
  }

  async GetUserMessageSummaries(
    callback?: (result: ClientResult, summaries: UserMessageSummary[]) => void,
  ): Promise<{ result: ClientResult; summaries: UserMessageSummary[] }> {
    const outcome = await this.#messages.getUserMessageSummaries();
    callback?.(outcome.result, outcome.summaries);
    return outcome;
  }

  GetMessageHandle(messageId: bigint | string): MessageHandle | undefined {
    return this.#messages.getMessageHandle(messageId);
  }

  SetMessageCreatedCallback(callback: MessageCreatedCallback): void {
    this.#messages.setMessageCreatedCallback(callback);
  }

  SetMessageUpdatedCallback(callback: MessageUpdatedCallback): void {
    this.#messages.setMessageUpdatedCallback(callback);
  }

  SetMessageDeletedCallback(callback: MessageDeletedCallback): void {
    this.#messages.setMessageDeletedCallback(callback);
  }
}

/** Reports an operation's result to its callback and resolves with it. */
async function reported(outcome: Promise<ClientResult>, callback?: ResultCallback): Promise<ClientResult> {
  const result = await outcome;
  callback?.(result);
  return result;
}

/** Options every entry shares; each entry (Node, browser) fills in its own defaults. */
export function withDefaults(
  options: ClientOptions | undefined,
  defaults: ClientEnvironment,
): ClientSettings {
  const injected = options?.webSocket;
  return {
    fetch: options?.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    opener: options?.opener ?? defaults.opener,
    redirect: options?.redirect ?? defaults.redirect,
    build: options?.build ?? 'release',
    launchCommands: defaults.launchCommands?.(options?.launchCommandsDir),
    launchJoin: defaults.launchJoin?.(),
    voice: options?.voiceNetwork ?? defaults.voice?.(),
    voiceLogWriter: defaults.voiceLogWriter,
    createOptions: options?.createOptions ?? new ClientCreateOptions(),
    openSocket: (url) => {
      const WebSocket = injected ?? defaults.webSocket();
      if (!WebSocket) throw new Error('this environment has no WebSocket: pass the webSocket option');
      return new WebSocket(url);
    },
    os: defaults.os,
  };
}

/** The custom-scheme strategy, usable everywhere (mobile builds, browsers). */
export const customSchemeRedirect: RedirectStrategy = async (context) => customSchemeReceiver(context);
