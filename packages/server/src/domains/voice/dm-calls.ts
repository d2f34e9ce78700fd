import { CALL_REGION, CallDispatches, isSnowflake } from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { VoiceMembership } from './service.js';
import * as store from './store.js';

/**
 * What a DM call needs of the channels: a private channel's recipients and whether a bot is among them
 * (undefined: no such channel).
 */
export type PrivateChannelLookup = (
  db: Executor,
  channelId: string,
) => Promise<{ recipients: readonly string[]; withBot: boolean } | undefined>;

/** What a DM call needs of the messages domain: its CALL system message (type 3) and its `call` object. */
export interface CallMessages {
  postCallMessage(
    tx: Executor,
    call: { channelId: string; recipients: readonly string[]; authorId: string },
  ): Promise<{ id: string; event: BusEvent }>;
  updateCallMessage(
    tx: Executor,
    call: {
      channelId: string;
      recipients: readonly string[];
      messageId: string;
      participant?: string;
      endedAt?: number;
    },
  ): Promise<BusEvent | undefined>;
}

export interface DmCallsDeps {
  storage: Storage;
  bus: Bus;
  clock: Clock;
  channel: PrivateChannelLookup;
  /** The private channels a user is a recipient of. */
  channelsOf: (db: Executor, userId: string) => Promise<string[]>;
  messages: CallMessages;
}

/** A voice state in a private call: no `guild_id` (and no member); `channel_id` null once left. */
export interface DmVoiceStateObject {
  channel_id: string | null;
  user_id: string;
  session_id: string;
  deaf: false;
  mute: false;
  self_deaf: boolean;
  self_mute: boolean;
  self_stream: false;
  self_video: boolean;
  suppress: false;
  request_to_speak_timestamp: null;
}

/** CALL_CREATE / CALL_UPDATE `d`. */
export interface CallObject {
  channel_id: string;
  message_id: string;
  region: string;
  ringing: string[];
  voice_states: DmVoiceStateObject[];
}

/**
 * Calls in DMs (the platform's private calls): main gateway op 4 with `guild_id: null` and a DM the user is
 * a recipient of as `channel_id` joins its call (`channel_id: null` leaves it). The recipients receive
 * VOICE_STATE_UPDATE without `guild_id`; the first to join starts the call: a CALL message (type 3) by them
 * in the DM and CALL_CREATE ringing the other recipients; each later join or leave is a CALL_UPDATE (a
 * joiner is no longer rung); the last to leave ends it: the message's `call.ended_timestamp` is set and
 * CALL_DELETE goes out. The joining session gets VOICE_SERVER_UPDATE `{token, guild_id: null, channel_id,
 * endpoint}` and identifies on the voice gateway with `server_id` = the channel id. A user is in one
 * private call at a time; every participant may speak and hear. A DM with a bot has no calls.
 */
export class DmCalls {
  readonly #deps: DmCallsDeps;

  constructor(deps: DmCallsDeps) {
    this.#deps = deps;
  }

  /** Whether op 4 naming this channel is for a DM call (rather than a lobby's). */
  async isPrivateChannel(channelId: string): Promise<boolean> {
    return (await this.#deps.channel(this.#deps.storage.db, channelId)) !== undefined;
  }

  /**
   * Op 4 without a guild for a DM: answers the call joined (and `left`, the one the user was in before), or
   * the one left (`joined: false`); 10003 for a channel the user is not a recipient of, 50007 for a DM
   * with a bot. `channel_id: null` leaves only the call this session is in.
   */
  async update(
    userId: string,
    sessionId: string,
    payload: unknown,
  ): Promise<{ channelId: string; joined: boolean; left?: string } | undefined> {
    const input = parse(payload);
    const { storage } = this.#deps;
    const events: BusEvent[] = [];
    const result = await storage.transaction(async (tx) => {
      const current = await store.findDmVoiceState(tx, userId);
      let recipients: readonly string[] = [];
      if (input.channelId !== null) {
        const channel = await this.#deps.channel(tx, input.channelId);
        if (!channel?.recipients.includes(userId)) throw new HearthError('UnknownChannel');
        // Bots make no calls outside guilds and cannot be called (the platform's bot accounts).
        if (channel.withBot) throw new HearthError('CannotSendMessagesToThisUser');
        recipients = channel.recipients;
      }
      let left: string | undefined;
      // Another call of the user's is left for this one; a bare leave only ends this session's own.
      const leaves =
        current !== undefined &&
        (input.channelId === null
          ? current.session_id === sessionId
          : current.channel_id !== input.channelId);
      if (current && leaves) {
        await store.deleteDmVoiceState(tx, userId);
        events.push(...(await this.#left(tx, current)));
        left = current.channel_id;
      }
      if (input.channelId === null)
        return left === undefined ? undefined : { channelId: left, joined: false };
      const row: store.DmVoiceStateRow = {
        user_id: userId,
        channel_id: input.channelId,
        session_id: sessionId,
        self_mute: input.selfMute ? 1 : 0,
        self_deaf: input.selfDeaf ? 1 : 0,
        self_video: input.selfVideo ? 1 : 0,
      };
      await store.upsertDmVoiceState(tx, row);
      const stateEvent = voiceStateEvent(row, row.channel_id, recipients);
      // Mute, deafen or camera changed, or another session of the same user took the place: the call's
      // participants stay the same.
      if (current?.channel_id === input.channelId) {
        events.push(stateEvent);
        return { channelId: input.channelId, joined: true };
      }
      events.push(...(await this.#joined(tx, row, recipients)), stateEvent);
      return { channelId: input.channelId, joined: true, ...(left === undefined ? {} : { left }) };
    });
    for (const event of events) await this.#deps.bus.publish(event);
    return result;
  }

  /** Who may do what in a DM call: every participant sends and receives, end-to-end encrypted. */
  async membership(channelId: string, userId: string): Promise<VoiceMembership | undefined> {
    const { db } = this.#deps.storage;
    const row = await store.findDmVoiceState(db, userId);
    if (row?.channel_id !== channelId) return undefined;
    const channel = await this.#deps.channel(db, channelId);
    if (!channel?.recipients.includes(userId)) return undefined;
    return {
      channelId,
      sessionId: row.session_id,
      connect: true,
      rights: { send: true, receive: true, priority: false },
      // DM calls are among those end-to-end encrypted only from 1 March 2026 (seed).
      endToEndCall: true,
    };
  }

  /**
   * The calls going on in the user's DMs, as CALL_CREATE `d`: a session that starts after a call did
   * learns of it (and of who is rung) as the recipients did when it started.
   */
  async callsOf(userId: string): Promise<CallObject[]> {
    const { db } = this.#deps.storage;
    const calls = await store.dmCallsIn(db, await this.#deps.channelsOf(db, userId));
    return Promise.all(calls.map((call) => this.#callObject(db, call)));
  }

  /** A gateway session ended for good: it leaves the DM call it was in. */
  async sessionEnded(userId: string, sessionId: string): Promise<void> {
    await this.update(userId, sessionId, { guild_id: null, channel_id: null });
  }

  /** The first joiner starts the call (its message, CALL_CREATE); a later one is a CALL_UPDATE. */
  async #joined(
    tx: Executor,
    row: store.DmVoiceStateRow,
    recipients: readonly string[],
  ): Promise<BusEvent[]> {
    const channelId = row.channel_id;
    const others = recipients.filter((id) => id !== row.user_id);
    const claimed = await store.claimDmCall(tx, {
      channel_id: channelId,
      message_id: '',
      ringing: JSON.stringify(others),
    });
    const events: BusEvent[] = [];
    let type: string = CallDispatches.CallUpdate;
    if (claimed) {
      const message = await this.#deps.messages.postCallMessage(tx, {
        channelId,
        recipients,
        authorId: row.user_id,
      });
      await store.updateDmCall(tx, channelId, { message_id: message.id });
      events.push(message.event);
      type = CallDispatches.CallCreate;
    } else {
      const call = (await store.findDmCall(tx, channelId))!;
      const ringing = (JSON.parse(call.ringing) as string[]).filter((id) => id !== row.user_id);
      await store.updateDmCall(tx, channelId, { ringing: JSON.stringify(ringing) });
      await this.#deps.messages.updateCallMessage(tx, {
        channelId,
        recipients,
        messageId: call.message_id,
        participant: row.user_id,
      });
    }
    // CALL_CREATE before the message that names it, then the joiner's voice state (the caller appends it).
    return [await this.#callEvent(tx, type, channelId, recipients), ...events];
  }

  /** The user left `row`'s call: the others learn of it; the last one out ends the call. */
  async #left(tx: Executor, row: store.DmVoiceStateRow): Promise<BusEvent[]> {
    const channelId = row.channel_id;
    const recipients = (await this.#deps.channel(tx, channelId))?.recipients ?? [row.user_id];
    const events = [voiceStateEvent(row, null, recipients)];
    const remaining = await store.dmVoiceStatesOf(tx, channelId);
    const call = await store.findDmCall(tx, channelId);
    if (!call) return events;
    if (remaining.length > 0) {
      events.push(await this.#callEvent(tx, CallDispatches.CallUpdate, channelId, recipients));
      return events;
    }
    await store.deleteDmCall(tx, channelId);
    const ended = await this.#deps.messages.updateCallMessage(tx, {
      channelId,
      recipients,
      messageId: call.message_id,
      endedAt: this.#deps.clock.now(),
    });
    if (ended) events.push(ended);
    events.push({
      type: CallDispatches.CallDelete,
      data: { channel_id: channelId },
      audience: { users: [...recipients] },
    });
    return events;
  }

  async #callEvent(
    tx: Executor,
    type: string,
    channelId: string,
    recipients: readonly string[],
  ): Promise<BusEvent> {
    const data = await this.#callObject(tx, (await store.findDmCall(tx, channelId))!);
    return { type, data: { ...data }, audience: { users: [...recipients] } };
  }

  async #callObject(db: Executor, call: store.DmCallRow): Promise<CallObject> {
    const states = await store.dmVoiceStatesOf(db, call.channel_id);
    return {
      channel_id: call.channel_id,
      message_id: call.message_id,
      region: CALL_REGION,
      ringing: JSON.parse(call.ringing) as string[],
      voice_states: states.map((state) => toDmVoiceState(state, state.channel_id)),
    };
  }
}

function toDmVoiceState(row: store.DmVoiceStateRow, channelId: string | null): DmVoiceStateObject {
  return {
    channel_id: channelId,
    user_id: row.user_id,
    session_id: row.session_id,
    deaf: false,
    mute: false,
    self_deaf: row.self_deaf === 1,
    self_mute: row.self_mute === 1,
    self_stream: false,
    self_video: row.self_video === 1,
    suppress: false,
    request_to_speak_timestamp: null,
  };
}

function voiceStateEvent(
  row: store.DmVoiceStateRow,
  channelId: string | null,
  recipients: readonly string[],
): BusEvent {
  const users = [...new Set([...recipients, row.user_id])];
  return { type: 'VOICE_STATE_UPDATE', data: { ...toDmVoiceState(row, channelId) }, audience: { users } };
}

function parse(payload: unknown): {
  channelId: string | null;
  selfMute: boolean;
  selfDeaf: boolean;
  selfVideo: boolean;
} {
  const input = payload as {
    channel_id?: unknown;
    self_mute?: unknown;
    self_deaf?: unknown;
    self_video?: unknown;
  } | null;
  const channelId = input?.channel_id;
  if (!(channelId === null || (typeof channelId === 'string' && isSnowflake(channelId)))) {
    throw new HearthError('UnknownChannel');
  }
  return {
    channelId,
    selfMute: input?.self_mute === true,
    selfDeaf: input?.self_deaf === true,
    selfVideo: input?.self_video === true,
  };
}
