import { CALL_REGION, CallDispatches, FormErrors, isSnowflake } from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
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
  /**
   * Whether a channel that is no private channel exists and the user may see it (a guild channel or
   * thread): the ring routes answer 50024 for it; throws 10003 / 50001 as the channel routes do.
   */
  visibleGuildChannel: (db: Executor, userId: string, channelId: string) => Promise<void>;
  /** How long a recipient is rung before the ring stops by itself (`--voice-ring-timeout`). */
  ringTimeoutMs: number;
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
 * Ringing: the call rings the other recipients for the ring timeout; POST .../call/ring rings (again),
 * .../call/stop-ringing declines or cancels, and a ring nobody answers stops at its timeout (a sweep), each
 * a CALL_UPDATE. A person has one voice connection: a DM call and a guild voice channel exclude each other
 * (the app wires that rule between this domain and the guild voice states).
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

  /**
   * The user's DM call, whichever session is in it, is left for a guild's voice (one voice connection per
   * user): answers the channel of the call left, if any.
   */
  async leave(userId: string): Promise<string | undefined> {
    const events: BusEvent[] = [];
    const left = await this.#deps.storage.transaction(async (tx) => {
      const current = await store.findDmVoiceState(tx, userId);
      if (!current) return undefined;
      await store.deleteDmVoiceState(tx, userId);
      events.push(...(await this.#left(tx, current)));
      return current.channel_id;
    });
    for (const event of events) await this.#deps.bus.publish(event);
    return left;
  }

  /** The user is no longer a recipient of `channelId`: they leave its call, or are no longer rung by it. */
  async leaveChannel(userId: string, channelId: string): Promise<void> {
    const current = await store.findDmVoiceState(this.#deps.storage.db, userId);
    if (current?.channel_id === channelId) {
      await this.leave(userId);
      return;
    }
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      if ((await store.stopRinging(tx, channelId, [userId])) === 0) return;
      const recipients = (await this.#deps.channel(tx, channelId))?.recipients ?? [];
      events.push(await this.#callEvent(tx, CallDispatches.CallUpdate, channelId, recipients));
    });
    for (const event of events) await this.#deps.bus.publish(event);
  }

  /**
   * POST /channels/{id}/call/ring: rings `recipients` (null: every recipient not in the call) of the
   * channel's call, anew for those already rung; CALL_UPDATE to the recipients. The caller and those in the
   * call are not rung. 404 without a call going on; 50035 for an id that is no recipient of the channel.
   */
  async ring(userId: string, channelId: string, recipients: readonly string[] | null): Promise<void> {
    await this.#changeRinging(userId, channelId, recipients, async (tx, call, targets) => {
      const inCall = new Set((await store.dmVoiceStatesOf(tx, channelId)).map((state) => state.user_id));
      const rung = targets.filter((id) => id !== userId && !inCall.has(id));
      await store.ring(tx, call.channel_id, rung, this.#deps.clock.now() + this.#deps.ringTimeoutMs);
      // Ringing again is news even when the list stays the same: the recipients' clients ring again.
      return true;
    });
  }

  /**
   * POST /channels/{id}/call/stop-ringing: stops ringing `recipients`. Anyone may stop ringing themselves
   * (declining); stopping another's ring is for those in the call (50001 otherwise). CALL_UPDATE when the
   * ringing changed.
   */
  async stopRinging(userId: string, channelId: string, recipients: readonly string[]): Promise<void> {
    await this.#changeRinging(userId, channelId, recipients, async (tx, call, targets) => {
      if (targets.some((id) => id !== userId)) {
        const own = await store.findDmVoiceState(tx, userId);
        if (own?.channel_id !== call.channel_id) throw new HearthError('MissingAccess');
      }
      return (await store.stopRinging(tx, call.channel_id, targets)) > 0;
    });
  }

  /**
   * The rings whose time ran out stop (a sweep, on every node: the delete decides who reports it); a
   * call with nobody left in it and nobody rung ends. Answers how many calls changed.
   */
  async expireRings(): Promise<number> {
    const { storage, clock } = this.#deps;
    const now = clock.now();
    let changed = 0;
    for (const channelId of await store.callsWithExpiredRings(storage.db, now)) {
      const events: BusEvent[] = [];
      await storage.transaction(async (tx) => {
        if ((await store.expireRings(tx, channelId, now)) === 0) return;
        const call = await store.findDmCall(tx, channelId);
        if (!call) return;
        const recipients = (await this.#deps.channel(tx, channelId))?.recipients ?? [];
        const idle =
          (await store.dmVoiceStatesOf(tx, channelId)).length === 0 &&
          (await store.ringingIn(tx, channelId)).length === 0;
        if (idle) events.push(...(await this.#end(tx, call, recipients)));
        else events.push(await this.#callEvent(tx, CallDispatches.CallUpdate, channelId, recipients));
      });
      if (events.length > 0) changed += 1;
      for (const event of events) await this.#deps.bus.publish(event);
    }
    return changed;
  }

  /** The ring routes' common steps: the caller's private channel, its call, the targets checked. */
  async #changeRinging(
    userId: string,
    channelId: string,
    recipients: readonly string[] | null,
    change: (tx: Executor, call: store.DmCallRow, targets: readonly string[]) => Promise<boolean>,
  ): Promise<void> {
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      const channel = await this.#deps.channel(tx, channelId);
      if (!channel) {
        await this.#deps.visibleGuildChannel(tx, userId, channelId);
        throw new HearthError('CannotExecuteOnChannelType');
      }
      if (!channel.recipients.includes(userId)) throw new HearthError('MissingAccess');
      const call = await store.findDmCall(tx, channelId);
      if (!call) throw new HearthError('GeneralNotFound');
      const targets = [...new Set(recipients ?? channel.recipients)];
      const stranger = (recipients ?? []).findIndex((id) => !channel.recipients.includes(id));
      if (stranger !== -1) throw invalidForm(`recipients.${stranger}`, FormErrors.invalid());
      if (!(await change(tx, call, targets))) return;
      events.push(await this.#callEvent(tx, CallDispatches.CallUpdate, channelId, channel.recipients));
    });
    for (const event of events) await this.#deps.bus.publish(event);
  }

  /** The first joiner starts the call (its message, CALL_CREATE); a later one is a CALL_UPDATE. */
  async #joined(
    tx: Executor,
    row: store.DmVoiceStateRow,
    recipients: readonly string[],
  ): Promise<BusEvent[]> {
    const channelId = row.channel_id;
    const others = recipients.filter((id) => id !== row.user_id);
    const claimed = await store.claimDmCall(tx, { channel_id: channelId, message_id: '' });
    const events: BusEvent[] = [];
    let type: string = CallDispatches.CallUpdate;
    if (claimed) {
      await store.ring(tx, channelId, others, this.#deps.clock.now() + this.#deps.ringTimeoutMs);
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
      await store.stopRinging(tx, channelId, [row.user_id]);
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
    events.push(...(await this.#end(tx, call, recipients)));
    return events;
  }

  /** Nobody is left in the call: its message records when it ended, CALL_DELETE goes out. */
  async #end(tx: Executor, call: store.DmCallRow, recipients: readonly string[]): Promise<BusEvent[]> {
    const channelId = call.channel_id;
    const events: BusEvent[] = [];
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
      ringing: await store.ringingIn(db, call.channel_id),
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
