import { MessageActivityTypes, RpcEvents } from '@hearth/protocol';
import type { GatewayDispatch } from './server-link.js';
import { type RpcSession, subscriptionKey } from './session.js';
import type { VoiceStateChange, VoiceTracker } from './voice.js';

/** What forwarding needs: the agent's user, its voice view and the connected games. */
export interface ForwardContext {
  userId: string;
  voice: VoiceTracker;
  sessions: Iterable<RpcSession>;
  serverUrl: string;
}

/** Whether the session subscribed to `evt` (narrowed by `args`). */
export function subscribed(session: RpcSession, evt: string, args: Record<string, unknown> = {}): boolean {
  return session.subscriptions.has(subscriptionKey(evt, args));
}

/**
 * Turns the agent's gateway dispatches into RPC events for the sessions that subscribed to them
 * (PROTOCOL.md §H Events): messages of a channel, notifications, activity invites and join requests of the
 * session's game, voice states of a channel and the user's own voice channel.
 */
export function forwardDispatch(
  context: ForwardContext,
  dispatch: GatewayDispatch,
  changes: VoiceStateChange[],
) {
  switch (dispatch.t) {
    case 'MESSAGE_CREATE':
      forwardMessage(context, RpcEvents.MessageCreate, dispatch.d);
      forwardActivityMessage(context, dispatch.d);
      forwardNotification(context, dispatch.d);
      return;
    case 'MESSAGE_UPDATE':
      forwardMessage(context, RpcEvents.MessageUpdate, dispatch.d);
      return;
    case 'MESSAGE_DELETE':
      forwardMessage(context, RpcEvents.MessageDelete, {
        id: dispatch.d['id'],
        channel_id: dispatch.d['channel_id'],
      });
      return;
    case 'GUILD_CREATE':
      toAll(context, RpcEvents.GuildCreate, {}, { id: dispatch.d['id'], name: dispatch.d['name'] });
      return;
    case 'GUILD_UPDATE': {
      const guildId = dispatch.d['id'];
      const icon = dispatch.d['icon'];
      toAll(
        context,
        RpcEvents.GuildStatus,
        { guild_id: guildId },
        {
          guild: {
            id: guildId,
            name: dispatch.d['name'],
            icon_url:
              typeof icon === 'string' ? `${context.serverUrl}/icons/${String(guildId)}/${icon}.png` : null,
          },
          online: 0,
        },
      );
      return;
    }
    case 'CHANNEL_CREATE':
      toAll(
        context,
        RpcEvents.ChannelCreate,
        {},
        {
          id: dispatch.d['id'],
          name: dispatch.d['name'],
          type: dispatch.d['type'],
        },
      );
      return;
    case 'VOICE_STATE_UPDATE':
      for (const change of changes) forwardVoiceState(context, change);
      return;
    default:
      return;
  }
}

function toAll(context: ForwardContext, evt: string, args: Record<string, unknown>, data: unknown): void {
  for (const session of context.sessions) if (subscribed(session, evt, args)) session.dispatch(evt, data);
}

function forwardMessage(context: ForwardContext, evt: string, message: Record<string, unknown>): void {
  const channelId = message['channel_id'];
  if (typeof channelId !== 'string') return;
  toAll(context, evt, { channel_id: channelId }, { channel_id: channelId, message });
}

/**
 * A game DM carrying an activity (§B.9) for the session's game, from someone else: a JOIN invite becomes
 * ACTIVITY_INVITE, a JOIN_REQUEST becomes ACTIVITY_JOIN_REQUEST (remembered for the host's answer).
 */
function forwardActivityMessage(context: ForwardContext, message: Record<string, unknown>): void {
  const activity = message['activity'] as { type?: number; party_id?: string } | undefined;
  const author = message['author'] as { id?: string } | undefined;
  if (!activity || !author?.id || author.id === context.userId) return;
  for (const session of context.sessions) {
    if (message['application_id'] !== session.application.id) continue;
    if (activity.type === MessageActivityTypes.JoinRequest) {
      session.joinRequests.add(author.id);
      if (subscribed(session, RpcEvents.ActivityJoinRequest)) {
        session.dispatch(RpcEvents.ActivityJoinRequest, { user: author });
      }
    } else if (activity.type === MessageActivityTypes.Join && subscribed(session, RpcEvents.ActivityInvite)) {
      session.dispatch(RpcEvents.ActivityInvite, {
        type: MessageActivityTypes.Join,
        user: author,
        activity,
        channel_id: message['channel_id'],
        message_id: message['id'],
      });
    }
  }
}

/** A message for the player from someone else, in a DM or mentioning them: NOTIFICATION_CREATE. */
function forwardNotification(context: ForwardContext, message: Record<string, unknown>): void {
  const author = message['author'] as
    | { id?: string; username?: string; global_name?: string | null }
    | undefined;
  if (!author?.id || author.id === context.userId) return;
  const mentions = (message['mentions'] as Array<{ id?: string }> | undefined) ?? [];
  const direct = message['guild_id'] === undefined || message['guild_id'] === null;
  if (!direct && !mentions.some((user) => user.id === context.userId)) return;
  toAll(
    context,
    RpcEvents.NotificationCreate,
    {},
    {
      channel_id: message['channel_id'],
      message,
      icon_url: null,
      title: author.global_name ?? author.username ?? '',
      body: typeof message['content'] === 'string' ? message['content'] : '',
    },
  );
}

/** VOICE_STATE_CREATE/UPDATE/DELETE for the channel's subscribers; VOICE_CHANNEL_SELECT for the player's moves. */
function forwardVoiceState(context: ForwardContext, change: VoiceStateChange): void {
  const { before, after } = change;
  const from = before?.channel_id ?? null;
  const to = after.channel_id;
  const { voice } = context;
  if (from !== null && from === to) {
    toAll(context, RpcEvents.VoiceStateUpdate, { channel_id: to }, voice.toRpcVoiceState(after));
  } else {
    if (from !== null && before) {
      toAll(context, RpcEvents.VoiceStateDelete, { channel_id: from }, voice.toRpcVoiceState(before));
    }
    if (to !== null)
      toAll(context, RpcEvents.VoiceStateCreate, { channel_id: to }, voice.toRpcVoiceState(after));
  }
  if (after.user_id === context.userId && from !== to) {
    toAll(
      context,
      RpcEvents.VoiceChannelSelect,
      {},
      { channel_id: to, guild_id: to === null ? null : after.guild_id },
    );
  }
}
