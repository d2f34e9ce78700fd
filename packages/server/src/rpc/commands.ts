import {
  MessageActivityTypes,
  RPC_COMMAND_SCOPES,
  RPC_EVENT_SCOPES,
  RPC_UNAUTHENTICATED_EVENTS,
  type RpcCommand,
  RpcCommands,
  RpcErrorCodes,
  type RpcEvent,
  RpcEvents,
  Scopes,
} from '@hearth/protocol';
import type { ActivityInput } from '../domains/presence/schemas.js';
import { toGatewayActivity } from './activity.js';
import { acceptActivityInviteCommand, type InviteAccepter } from './launch-accept-invite.js';
import type { ServerAnswer, ServerLink } from './server-link.js';
import { RpcError, type RpcPayload, type RpcSession, subscriptionKey } from './session.js';
import type { VoiceTracker } from './voice.js';

/** An AUTHORIZE the agent is asked to grant: the platform client's consent dialog. */
export interface ConsentRequest {
  application: { id: string; name: string };
  scopes: string[];
}

/** What the commands ask of the agent that runs them (STYLE.md rule 16: a seam, not the agent itself). */
export interface AgentPort extends InviteAccepter {
  readonly link: ServerLink;
  /** The signed-in player. */
  readonly userId: string;
  readonly voice: VoiceTracker;
  /** The player's answer to a consent request; the agent signed in as that player decides. */
  consent(request: ConsentRequest): Promise<boolean>;
  /** The session's game activity (null: cleared); every game's activity goes out in one op 3. */
  setActivity(session: RpcSession, activity: ActivityInput | null): void;
  /** Op 4 and the wait for the user's own VOICE_STATE_UPDATE; rejects with 5001 on timeout. */
  selectVoiceChannel(guildId: string, channelId: string | null, timeoutMs: number): Promise<void>;
}

type Args = Record<string, unknown>;
type Command = (agent: AgentPort, session: RpcSession, args: Args, request: RpcPayload) => Promise<unknown>;

/** Events a SUBSCRIBE may name, with the argument that narrows each (PROTOCOL.md §H Events). */
const SUBSCRIBABLE: Readonly<Partial<Record<RpcEvent, 'channel_id' | 'guild_id' | null>>> = {
  [RpcEvents.GuildStatus]: 'guild_id',
  [RpcEvents.GuildCreate]: null,
  [RpcEvents.ChannelCreate]: null,
  [RpcEvents.VoiceChannelSelect]: null,
  [RpcEvents.VoiceStateCreate]: 'channel_id',
  [RpcEvents.VoiceStateUpdate]: 'channel_id',
  [RpcEvents.VoiceStateDelete]: 'channel_id',
  [RpcEvents.VoiceSettingsUpdate]: null,
  [RpcEvents.VoiceConnectionStatus]: null,
  [RpcEvents.SpeakingStart]: 'channel_id',
  [RpcEvents.SpeakingStop]: 'channel_id',
  [RpcEvents.MessageCreate]: 'channel_id',
  [RpcEvents.MessageUpdate]: 'channel_id',
  [RpcEvents.MessageDelete]: 'channel_id',
  [RpcEvents.NotificationCreate]: null,
  [RpcEvents.ActivityJoin]: null,
  [RpcEvents.ActivitySpectate]: null,
  [RpcEvents.ActivityJoinRequest]: null,
  [RpcEvents.ActivityInvite]: null,
};

/** Voice and stage channels (GUILDS.md §2.1): the channels SELECT_VOICE_CHANNEL takes. */
const VOICE_CHANNEL_TYPES = new Set([2, 13]);

/** Every command of the transport, in one table (STYLE.md rule 8). */
export const COMMANDS: Readonly<Partial<Record<RpcCommand, Command>>> = {
  [RpcCommands.Authorize]: authorize,
  [RpcCommands.Authenticate]: authenticate,
  [RpcCommands.GetGuilds]: getGuilds,
  [RpcCommands.GetGuild]: getGuild,
  [RpcCommands.GetChannels]: getChannels,
  [RpcCommands.GetChannel]: getChannel,
  [RpcCommands.Subscribe]: subscribe,
  [RpcCommands.Unsubscribe]: unsubscribe,
  [RpcCommands.SetActivity]: setActivity,
  [RpcCommands.SendActivityJoinInvite]: sendActivityJoinInvite,
  [RpcCommands.CloseActivityRequest]: closeActivityRequest,
  [RpcCommands.CloseActivityJoinRequest]: closeActivityRequest,
  [RpcCommands.SelectVoiceChannel]: selectVoiceChannel,
  [RpcCommands.GetSelectedVoiceChannel]: getSelectedVoiceChannel,
  [RpcCommands.GetVoiceSettings]: async (agent) => agent.voice.settings,
  [RpcCommands.SetUserVoiceSettings]: async (agent, _session, args) => agent.voice.setUserSettings(args),
  [RpcCommands.AcceptActivityInvite]: (agent, _session, args) => acceptActivityInviteCommand(agent, args),
};

/**
 * Serves one FRAME: checks the payload, the command, its scopes (4006 before AUTHENTICATE or without the
 * scope), runs it and answers with the same `cmd` and `nonce`, or with an ERROR.
 */
export async function serveCommand(agent: AgentPort, session: RpcSession, payload: unknown): Promise<void> {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    session.fail({}, new RpcError(RpcErrorCodes.InvalidPayload, 'Payload must be an object'));
    return;
  }
  const request = payload as RpcPayload;
  const nonce = request.nonce;
  if (
    typeof request.cmd !== 'string' ||
    (nonce !== undefined && nonce !== null && typeof nonce !== 'string')
  ) {
    session.fail(
      { ...(typeof nonce === 'string' ? { nonce } : {}) },
      new RpcError(RpcErrorCodes.InvalidPayload, 'cmd must be a string'),
    );
    return;
  }
  const command = COMMANDS[request.cmd as RpcCommand];
  if (!command || request.cmd === RpcCommands.Dispatch) {
    session.fail(request, new RpcError(RpcErrorCodes.InvalidCommand, `Invalid command: ${request.cmd}`));
    return;
  }
  const args = request.args ?? {};
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    session.fail(request, new RpcError(RpcErrorCodes.InvalidPayload, 'args must be an object'));
    return;
  }
  try {
    const needed = RPC_COMMAND_SCOPES[request.cmd as RpcCommand];
    if (needed) requireScope(session, needed);
    const data = await command(agent, session, args as Args, request);
    session.reply(request, data ?? null);
  } catch (error) {
    session.fail(
      request,
      error instanceof RpcError ? error : new RpcError(RpcErrorCodes.UnknownError, 'Unknown error'),
    );
  }
}

function requireScope(session: RpcSession, scopes: readonly string[]): void {
  if (!session.auth)
    throw new RpcError(RpcErrorCodes.InvalidPermissions, 'Not authenticated or invalid scope');
  if (!session.hasScope(scopes)) {
    throw new RpcError(RpcErrorCodes.InvalidPermissions, `Missing scope: one of ${scopes.join(', ')}`);
  }
}

// ---- Authorization ----

/**
 * AUTHORIZE `{client_id, scopes}` → `{code}`: the platform client's consent flow. The agent, signed in as
 * the player, asks for consent and answers through the server's authorize endpoint, whose rules (the
 * application's scopes and redirect URIs) decide; the code is exchanged by the game at /oauth2/token.
 */
async function authorize(agent: AgentPort, session: RpcSession, args: Args): Promise<unknown> {
  const clientId = args['client_id'] ?? session.application.id;
  if (clientId !== session.application.id) {
    throw new RpcError(RpcErrorCodes.InvalidClientId, 'client_id is not the connected application');
  }
  const scopes = typeof args['scopes'] === 'string' ? args['scopes'].split(' ') : args['scopes'];
  if (
    !Array.isArray(scopes) ||
    scopes.length === 0 ||
    !scopes.every((s) => typeof s === 'string' && s !== '')
  ) {
    throw new RpcError(RpcErrorCodes.InvalidPayload, 'scopes must be a non-empty array of scope names');
  }
  const prompt = args['prompt'];
  const approved = await agent.consent({
    application: { id: session.application.id, name: session.application.name },
    scopes: scopes as string[],
  });
  const query = new URLSearchParams({
    client_id: session.application.id,
    response_type: 'code',
    scope: (scopes as string[]).join(' '),
    ...(prompt === 'none' ? { prompt: 'none' } : {}),
  });
  const answer = await agent.link.api(`/oauth2/authorize?${query}`, {
    method: 'POST',
    body: { authorize: approved },
  });
  const location = (answer.body as { location?: unknown } | null)?.location;
  if (answer.status !== 200 || typeof location !== 'string') {
    throw new RpcError(RpcErrorCodes.OAuth2Error, `OAuth2 Error: ${describe(answer)}`);
  }
  const redirect = new URL(location);
  const code = redirect.searchParams.get('code');
  if (!code) {
    const error = redirect.searchParams.get('error') ?? 'invalid_request';
    const description = redirect.searchParams.get('error_description');
    throw new RpcError(
      RpcErrorCodes.OAuth2Error,
      `OAuth2 Error: ${error}${description ? `: ${description}` : ''}`,
    );
  }
  return { code };
}

/**
 * AUTHENTICATE `{access_token}` → `{user, scopes, expires, application}`: the token is checked with the
 * server (GET /oauth2/@me) and must belong to the connected application.
 */
async function authenticate(agent: AgentPort, session: RpcSession, args: Args): Promise<unknown> {
  const token = args['access_token'];
  if (typeof token !== 'string' || token === '') {
    throw new RpcError(RpcErrorCodes.InvalidPayload, 'access_token must be a string');
  }
  const answer = await agent.link.api('/oauth2/@me', { authorization: `Bearer ${token}` });
  const body = answer.body as {
    application?: { id?: string };
    scopes?: string[];
    expires?: string;
    user?: Record<string, unknown>;
  } | null;
  // The token must be the connected game's, and the signed-in player's when it names its user.
  if (
    answer.status !== 200 ||
    body?.application?.id !== session.application.id ||
    (body.user !== undefined && body.user['id'] !== agent.userId)
  ) {
    throw new RpcError(RpcErrorCodes.InvalidToken, 'Invalid access token');
  }
  const user = body.user ?? (await agent.link.api('/users/@me')).body;
  const application = {
    id: session.application.id,
    name: session.application.name,
    icon: session.application.icon,
    description: session.application.description,
    rpc_origins: session.application.rpc_origins,
  };
  session.auth = {
    accessToken: token,
    scopes: body.scopes ?? [],
    expires: body.expires ?? '',
    user: user as Record<string, unknown>,
    application,
  };
  return { user, scopes: session.auth.scopes, expires: session.auth.expires, application };
}

// ---- Guilds and channels: read through the player's session (the platform client's own view) ----

async function getGuilds(agent: AgentPort): Promise<unknown> {
  const answer = await agent.link.api('/users/@me/guilds');
  if (answer.status !== 200) throw new RpcError(RpcErrorCodes.UnknownError, describe(answer));
  const guilds = answer.body as Array<{ id: string; name: string; icon: string | null }>;
  return {
    guilds: guilds.map((guild) => ({ id: guild.id, name: guild.name, icon_url: iconUrl(agent, guild) })),
  };
}

async function getGuild(agent: AgentPort, _session: RpcSession, args: Args): Promise<unknown> {
  const guildId = snowflakeArg(args, 'guild_id', RpcErrorCodes.InvalidGuild, 'Invalid guild id');
  const answer = await agent.link.api(`/guilds/${guildId}`);
  if (answer.status !== 200) throw new RpcError(RpcErrorCodes.InvalidGuild, `Invalid guild id: ${guildId}`);
  const guild = answer.body as { id: string; name: string; icon: string | null };
  return {
    id: guild.id,
    name: guild.name,
    icon_url: iconUrl(agent, guild),
    members: [],
    vanity_url_code: null,
  };
}

async function getChannels(agent: AgentPort, _session: RpcSession, args: Args): Promise<unknown> {
  const guildId = snowflakeArg(args, 'guild_id', RpcErrorCodes.InvalidGuild, 'Invalid guild id');
  const answer = await agent.link.api(`/guilds/${guildId}/channels`);
  if (answer.status !== 200) throw new RpcError(RpcErrorCodes.InvalidGuild, `Invalid guild id: ${guildId}`);
  const channels = answer.body as Array<{ id: string; name: string; type: number }>;
  return {
    channels: channels.map((channel) => ({ id: channel.id, name: channel.name, type: channel.type })),
  };
}

async function getChannel(agent: AgentPort, _session: RpcSession, args: Args): Promise<unknown> {
  const channelId = snowflakeArg(args, 'channel_id', RpcErrorCodes.InvalidChannel, 'Invalid channel id');
  return rpcChannel(agent, await fetchChannel(agent, channelId));
}

async function fetchChannel(agent: AgentPort, channelId: string): Promise<Record<string, unknown>> {
  const answer = await agent.link.api(`/channels/${channelId}`);
  if (answer.status !== 200)
    throw new RpcError(RpcErrorCodes.InvalidChannel, `Invalid channel id: ${channelId}`);
  return answer.body as Record<string, unknown>;
}

/** The RPC channel object (DOCS rpc.mdx GET_CHANNEL): with the channel's voice states. */
function rpcChannel(agent: AgentPort, channel: Record<string, unknown>): Record<string, unknown> {
  const id = String(channel['id']);
  return {
    id,
    guild_id: channel['guild_id'] ?? null,
    name: channel['name'] ?? '',
    type: channel['type'],
    topic: channel['topic'] ?? '',
    bitrate: channel['bitrate'] ?? 64000,
    user_limit: channel['user_limit'] ?? 0,
    position: channel['position'] ?? 0,
    voice_states: agent.voice.statesIn(id).map((state) => agent.voice.toRpcVoiceState(state)),
    messages: [],
  };
}

// ---- Subscriptions ----

async function subscribe(
  agent: AgentPort,
  session: RpcSession,
  args: Args,
  request: RpcPayload,
): Promise<unknown> {
  const { evt, narrowed } = await checkSubscription(agent, session, args, request);
  session.subscriptions.set(subscriptionKey(evt, narrowed), { evt, args: narrowed });
  return { evt };
}

async function unsubscribe(
  _agent: AgentPort,
  session: RpcSession,
  args: Args,
  request: RpcPayload,
): Promise<unknown> {
  const evt = eventOf(request);
  const narrowed = narrow(evt, args);
  session.subscriptions.delete(subscriptionKey(evt, narrowed));
  return { evt };
}

function eventOf(request: RpcPayload): RpcEvent {
  const evt = request.evt;
  if (typeof evt !== 'string' || !(evt in SUBSCRIBABLE)) {
    throw new RpcError(RpcErrorCodes.InvalidEvent, `Invalid event: ${String(evt)}`);
  }
  return evt as RpcEvent;
}

function narrow(evt: RpcEvent, args: Args): Record<string, unknown> {
  const by = SUBSCRIBABLE[evt];
  if (!by) return {};
  const value = args[by];
  if (typeof value !== 'string' || !/^\d{1,20}$/.test(value)) {
    throw new RpcError(
      by === 'channel_id' ? RpcErrorCodes.InvalidChannel : RpcErrorCodes.InvalidGuild,
      `${by} is required for ${evt}`,
    );
  }
  return { [by]: value };
}

/** Event known, scopes held (the activity events need none), the channel or guild visible to the player. */
async function checkSubscription(
  agent: AgentPort,
  session: RpcSession,
  args: Args,
  request: RpcPayload,
): Promise<{ evt: RpcEvent; narrowed: Record<string, unknown> }> {
  const evt = eventOf(request);
  if (!RPC_UNAUTHENTICATED_EVENTS.includes(evt)) requireScope(session, RPC_EVENT_SCOPES[evt] ?? []);
  const narrowed = narrow(evt, args);
  if (typeof narrowed['channel_id'] === 'string') await fetchChannel(agent, narrowed['channel_id']);
  if (typeof narrowed['guild_id'] === 'string') {
    const answer = await agent.link.api(`/guilds/${narrowed['guild_id']}`);
    if (answer.status !== 200) throw new RpcError(RpcErrorCodes.InvalidGuild, 'Invalid guild id');
  }
  return { evt, narrowed };
}

// ---- Activities ----

/** SET_ACTIVITY `{pid, activity}`: the game's rich presence, which the player's friends receive (§B.8). */
async function setActivity(agent: AgentPort, session: RpcSession, args: Args): Promise<unknown> {
  const pid = args['pid'];
  if (!Number.isInteger(pid) || (pid as number) < 0) {
    throw new RpcError(RpcErrorCodes.InvalidPayload, 'pid must be a process id');
  }
  const input = args['activity'];
  if (input === undefined || input === null) {
    agent.setActivity(session, null);
    return null;
  }
  const activity = toGatewayActivity(session.application, input);
  agent.setActivity(session, activity);
  return activity;
}

/**
 * SEND_ACTIVITY_JOIN_INVITE `{user_id}`: accepts a user's request to join (ACTIVITY_JOIN_REQUEST) by sending
 * them a JOIN invite to the current party (§B.9). Invites are game DMs, sent with the game's token: the
 * connection must be authenticated with `activities.invites.write` or `dm_channels.messages.write`.
 */
async function sendActivityJoinInvite(agent: AgentPort, session: RpcSession, args: Args): Promise<unknown> {
  const userId = userArg(args);
  requireScope(session, [Scopes.ActivitiesInvitesWrite, Scopes.DmChannelsMessagesWrite]);
  const answer = await agent.link.api(`/users/${userId}/messages`, {
    method: 'POST',
    authorization: `Bearer ${session.auth!.accessToken}`,
    body: { activity: { type: MessageActivityTypes.Join, ...partyOf(session) } },
  });
  if (answer.status !== 200 && answer.status !== 201) {
    throw new RpcError(RpcErrorCodes.InvalidActivityJoinRequest, describe(answer));
  }
  session.joinRequests.delete(userId);
  return null;
}

/** CLOSE_ACTIVITY_REQUEST `{user_id}` (and the libraries' CLOSE_ACTIVITY_JOIN_REQUEST): declines a request. */
async function closeActivityRequest(_agent: AgentPort, session: RpcSession, args: Args): Promise<unknown> {
  const userId = userArg(args);
  if (!session.joinRequests.delete(userId)) {
    throw new RpcError(RpcErrorCodes.InvalidActivityJoinRequest, 'No pending join request from that user');
  }
  return null;
}

function partyOf(session: RpcSession): { party_id?: string } {
  const party = session.activity?.party?.id;
  return party ? { party_id: party } : {};
}

// ---- Voice ----

/** SELECT_VOICE_CHANNEL `{channel_id, timeout, force}`: op 4 on the agent's session; null leaves. */
async function selectVoiceChannel(agent: AgentPort, _session: RpcSession, args: Args): Promise<unknown> {
  const timeout = args['timeout'];
  const timeoutMs =
    typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0
      ? Math.min(timeout, 60) * 1000
      : 10_000;
  const current = agent.voice.selected();
  if (args['channel_id'] === null || args['channel_id'] === undefined) {
    if (current) await agent.selectVoiceChannel(current.guild_id, null, timeoutMs);
    return null;
  }
  const channelId = snowflakeArg(args, 'channel_id', RpcErrorCodes.InvalidChannel, 'Invalid channel id');
  const channel = await fetchChannel(agent, channelId);
  if (!VOICE_CHANNEL_TYPES.has(Number(channel['type'])) || typeof channel['guild_id'] !== 'string') {
    throw new RpcError(RpcErrorCodes.InvalidChannel, 'Not a voice channel');
  }
  if (current && current.channel_id !== channelId && args['force'] !== true) {
    throw new RpcError(
      RpcErrorCodes.SelectVoiceForceRequired,
      'Already in a voice channel: force is required',
    );
  }
  if (current?.channel_id !== channelId) {
    await agent.selectVoiceChannel(channel['guild_id'], channelId, timeoutMs);
  }
  return rpcChannel(agent, channel);
}

async function getSelectedVoiceChannel(agent: AgentPort): Promise<unknown> {
  const current = agent.voice.selected();
  if (!current?.channel_id) return null;
  return rpcChannel(agent, await fetchChannel(agent, current.channel_id));
}

// ---- Helpers ----

function snowflakeArg(
  args: Args,
  name: string,
  code: (typeof RpcErrorCodes)[keyof typeof RpcErrorCodes],
  message: string,
): string {
  const value = args[name];
  if (typeof value !== 'string' || !/^\d{1,20}$/.test(value)) throw new RpcError(code, message);
  return value;
}

function userArg(args: Args): string {
  return snowflakeArg(args, 'user_id', RpcErrorCodes.InvalidUser, 'Invalid user id');
}

function iconUrl(agent: AgentPort, guild: { id: string; icon: string | null }): string | null {
  return guild.icon ? `${agent.link.serverUrl}/icons/${guild.id}/${guild.icon}.png` : null;
}

function describe(answer: ServerAnswer): string {
  const body = answer.body as { message?: unknown; error?: unknown; error_description?: unknown } | null;
  if (typeof body?.error === 'string') {
    return typeof body.error_description === 'string'
      ? `${body.error}: ${body.error_description}`
      : body.error;
  }
  return typeof body?.message === 'string' ? body.message : `HTTP ${answer.status}`;
}
