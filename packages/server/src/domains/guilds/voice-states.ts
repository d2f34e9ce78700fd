import { ChannelTypes, FormErrors, PermissionFlags, VOICE_CHANNEL_TYPES } from '@hearth/protocol';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import { parse } from '../../kernel/validation.js';
import type { Executor } from '../../storage/database.js';
import type { MemberAccess } from './access.js';
import { type GuildCaller, GuildEvents, type GuildModerationDeps, type MembersService } from './members.js';
import {
  type ModifyCurrentVoiceState,
  type ModifyUserVoiceState,
  VoiceStateUpdate,
} from './members-schemas.js';
import * as membersStore from './members-store.js';
import { has } from './permissions.js';
import { voiceChannelsChanged } from './voice-occupancy.js';
import { toVoiceStateObject, type VoiceStateObject } from './voice-states-objects.js';
import * as store from './voice-states-store.js';

const P = PermissionFlags;

/**
 * Voice states (GUILDS.md §3.5, §7.4): who is in which voice channel of a guild. Gateway op 4 joins,
 * moves and leaves; REST reads them and manages stage speakers. The voice server is another issue.
 */
export class VoiceStatesService {
  readonly #deps: GuildModerationDeps & { members: MembersService };

  constructor(deps: GuildModerationDeps & { members: MembersService }) {
    this.#deps = deps;
  }

  /** The guild's voice states with their members, for GUILD_CREATE. */
  async voiceStatesOf(guildId: string): Promise<VoiceStateObject[]> {
    const { db } = this.#deps.storage;
    const rows = await store.voiceStatesOf(db, guildId);
    return Promise.all(rows.map(async (row) => this.#object(db, row)));
  }

  /** GET /guilds/{id}/voice-states/@me and /{user_id}: any member may read; 10065 when not in voice. */
  async getVoiceState(caller: GuildCaller, guildId: string, userId: string): Promise<VoiceStateObject> {
    const { db } = this.#deps.storage;
    await this.#deps.access.member(db, guildId, caller.userId);
    const row = await store.findVoiceState(db, guildId, userId);
    if (!row) throw new HearthError('UnknownVoiceState');
    return this.#object(db, row);
  }

  /**
   * PATCH /guilds/{id}/voice-states/@me: in the stage one is in, suppress oneself (always), unsuppress
   * (MUTE_MEMBERS), request to speak at a present or future time (REQUEST_TO_SPEAK) or clear it.
   */
  async modifyCurrentVoiceState(caller: GuildCaller, guildId: string, input: ModifyCurrentVoiceState) {
    const { storage, clock, bus } = this.#deps;
    const events = new GuildEvents(guildId, bus);
    await storage.transaction(async (tx) => {
      const { state, permissions } = await this.#stageState(tx, guildId, caller.userId, caller.userId, input);
      const patch: { suppress?: number; request_to_speak_timestamp?: number | null } = {};
      if (input.suppress != null) {
        if (!input.suppress && !has(permissions, P.MuteMembers)) throw new HearthError('MissingPermissions');
        patch.suppress = input.suppress ? 1 : 0;
      }
      if (input.request_to_speak_timestamp !== undefined) {
        const at =
          input.request_to_speak_timestamp === null ? null : Date.parse(input.request_to_speak_timestamp);
        if (at !== null) {
          if (!has(permissions, P.RequestToSpeak)) throw new HearthError('MissingPermissions');
          // A request may be dated now or later; a minute of client clock skew is forgiven.
          if (at < clock.now() - 60_000)
            throw invalidForm('request_to_speak_timestamp', FormErrors.invalid());
        }
        patch.request_to_speak_timestamp = at;
      }
      await store.updateVoiceState(tx, guildId, caller.userId, patch);
      await this.#queue(tx, events, { ...state, ...patch });
    });
    await events.publish();
  }

  /**
   * PATCH /guilds/{id}/voice-states/{user_id}: MUTE_MEMBERS in the target's stage; unsuppressing a person
   * stamps `request_to_speak_timestamp` now (bots get none), suppressing clears it (GUILDS.md §3.5).
   */
  async modifyUserVoiceState(
    caller: GuildCaller,
    guildId: string,
    userId: string,
    input: ModifyUserVoiceState,
  ): Promise<void> {
    const { storage, clock, bus, accounts } = this.#deps;
    const events = new GuildEvents(guildId, bus);
    await storage.transaction(async (tx) => {
      const { state, permissions } = await this.#stageState(tx, guildId, caller.userId, userId, input);
      if (!has(permissions, P.MuteMembers)) throw new HearthError('MissingPermissions');
      const patch: { suppress?: number; request_to_speak_timestamp?: number | null } = {};
      if (input.suppress != null) {
        patch.suppress = input.suppress ? 1 : 0;
        const user = await accounts.getUserIn(tx, userId);
        patch.request_to_speak_timestamp = input.suppress || user?.bot ? null : clock.now();
      }
      await store.updateVoiceState(tx, guildId, userId, patch);
      await this.#queue(tx, events, { ...state, ...patch });
    });
    await events.publish();
  }

  /**
   * Gateway op 4 (GUILDS.md §7.4): joins, moves within or leaves (`channel_id` null) the guild's voice.
   * Joining needs CONNECT, and room under `user_limit` unless MOVE_MEMBERS; answers the new state (null
   * after leaving). Errors are HearthErrors for the gateway to answer without closing the session.
   */
  async updateVoiceState(
    userId: string,
    sessionId: string,
    payload: unknown,
  ): Promise<VoiceStateObject | null> {
    const input = parse(VoiceStateUpdate, payload);
    const guildId = input.guild_id;
    const { storage, bus } = this.#deps;
    const events = new GuildEvents(guildId, bus);
    const state = await storage.transaction(async (tx) => {
      const access = await this.#deps.access.member(tx, guildId, userId);
      const before = await store.findVoiceState(tx, guildId, userId);
      if (input.channel_id === null) {
        if (before) await this.#leave(tx, events, before);
        return null;
      }
      const channel = await this.#joinableChannel(tx, access, input.channel_id, before?.channel_id);
      const member = (await membersStore.findMember(tx, guildId, userId)) ?? { mute: 0, deaf: 0 };
      const sameChannel = before?.channel_id === channel.id;
      // A stage's audience joins suppressed (GUILDS.md §3.5); staying in a channel keeps stage state.
      const stage = Number(channel.type) === ChannelTypes.GuildStageVoice;
      const row: store.VoiceStateRow = {
        guild_id: guildId,
        user_id: userId,
        channel_id: channel.id,
        session_id: sessionId,
        deaf: Number(member.deaf),
        mute: Number(member.mute),
        self_deaf: input.self_deaf ? 1 : 0,
        self_mute: input.self_mute ? 1 : 0,
        self_stream: sameChannel && before ? Number(before.self_stream) : 0,
        self_video: input.self_video ? 1 : 0,
        suppress: sameChannel && before ? Number(before.suppress) : stage ? 1 : 0,
        request_to_speak_timestamp: sameChannel && before ? before.request_to_speak_timestamp : null,
      };
      await store.upsertVoiceState(tx, row);
      const object = await this.#queue(tx, events, row);
      if (!sameChannel) await this.#occupancyChanged(tx, events, guildId, [before?.channel_id, channel.id]);
      return object;
    });
    await events.publish();
    return state;
  }

  /**
   * A gateway session ended for good: the voice states it held go, as if it had sent op 4 with no channel
   * (its client is gone; the channel it emptied ends its voice session).
   */
  async sessionEnded(userId: string, sessionId: string): Promise<void> {
    const { storage, bus } = this.#deps;
    for (const state of await store.voiceStatesOfSession(storage.db, userId, sessionId)) {
      const events = new GuildEvents(state.guild_id, bus);
      await storage.transaction(async (tx) => {
        const current = await store.findVoiceState(tx, state.guild_id, userId);
        if (current?.session_id === sessionId) await this.#leave(tx, events, current);
      });
      await events.publish();
    }
  }

  /**
   * The user joined a call outside guilds (a DM call): a person has one voice connection, so every guild
   * voice state of theirs goes, as with op 4 to no channel. Answers the guilds left.
   */
  async leaveAll(userId: string): Promise<string[]> {
    const { storage, bus } = this.#deps;
    const left: string[] = [];
    for (const state of await store.voiceStatesOfUser(storage.db, userId)) {
      const events = new GuildEvents(state.guild_id, bus);
      await storage.transaction(async (tx) => {
        const current = await store.findVoiceState(tx, state.guild_id, userId);
        if (!current) return;
        await this.#leave(tx, events, current);
        left.push(state.guild_id);
      });
      await events.publish();
    }
    return left;
  }

  /**
   * Inside a channel's deletion, before its voice states go with it: the VOICE_STATE_UPDATE with no channel
   * each member in it is sent, published after commit (after CHANNEL_DELETE, which has already ended the
   * call with 4022 on its voice node).
   */
  async channelDeleted(tx: Executor, channelId: string): Promise<(() => Promise<void>) | undefined> {
    const states = await store.voiceStatesInChannel(tx, channelId);
    const first = states[0];
    if (!first) return undefined;
    const events = new GuildEvents(first.guild_id, this.#deps.bus);
    for (const state of states) await this.#queue(tx, events, state, null);
    return () => events.publish();
  }

  /**
   * The voice server disconnects a member that lost CONNECT: its state goes as if it had sent op 4 with no
   * channel, unless another gateway session holds it by now.
   */
  async disconnect(guildId: string, userId: string, sessionId: string): Promise<void> {
    const { storage, bus } = this.#deps;
    const events = new GuildEvents(guildId, bus);
    await storage.transaction(async (tx) => {
      const current = await store.findVoiceState(tx, guildId, userId);
      if (current?.session_id === sessionId) await this.#leave(tx, events, current);
    });
    await events.publish();
  }

  /**
   * What the voice server may do for a member in its voice channel: send media with SPEAK unless muted or
   * suppressed, receive unless deafened, flag priority with PRIORITY_SPEAKER. Undefined when not in voice.
   */
  async voiceMembership(guildId: string, userId: string) {
    const { db } = this.#deps.storage;
    const state = await store.findVoiceState(db, guildId, userId);
    if (!state) return undefined;
    const access = await this.#deps.access.member(db, guildId, userId).catch(() => undefined);
    const channel = await store.findChannel(db, state.channel_id);
    if (!access || !channel) return undefined;
    const permissions = await this.#deps.access.permissionsIn(db, access, state.channel_id);
    return {
      channelId: state.channel_id,
      sessionId: state.session_id,
      connect: has(permissions, P.Connect),
      rights: {
        send: has(permissions, P.Speak) && !Number(state.mute) && !Number(state.suppress),
        receive: !Number(state.deaf),
        priority: has(permissions, P.PrioritySpeaker),
      },
      // Stages are not end-to-end encrypted; voice channels are from 1 March 2026 (seed).
      endToEndCall: Number(channel.type) !== ChannelTypes.GuildStageVoice,
    };
  }

  /** The voice channel a member is connected to in the guild, if any (voice status: "connected"). */
  async connectedChannel(db: Executor, guildId: string, userId: string): Promise<string | undefined> {
    return (await store.findVoiceState(db, guildId, userId))?.channel_id;
  }

  // ---- Steps ----

  /** Leaves voice: the state goes, VOICE_STATE_UPDATE with no channel, the channel's occupancy follows. */
  async #leave(tx: Executor, events: GuildEvents, state: store.VoiceStateRow): Promise<void> {
    await store.deleteVoiceState(tx, state.guild_id, state.user_id);
    await this.#queue(tx, events, state, null);
    await this.#occupancyChanged(tx, events, state.guild_id, [state.channel_id]);
  }

  /** Voice start times follow who is in each channel (PROTOCOL.md §D.7). */
  async #occupancyChanged(
    tx: Executor,
    events: GuildEvents,
    guildId: string,
    channelIds: ReadonlyArray<string | undefined>,
  ): Promise<void> {
    events.queue(await voiceChannelsChanged(tx, this.#deps.voiceChannels, guildId, channelIds));
  }

  /** The voice state object of a row, with its member. */
  async #object(db: Executor, row: store.VoiceStateRow, channelId: string | null = row.channel_id) {
    const member = await this.#deps.members
      .memberObject(row.guild_id, row.user_id, db)
      .catch(() => undefined);
    return toVoiceStateObject(row, member, channelId);
  }

  async #queue(
    db: Executor,
    events: GuildEvents,
    row: store.VoiceStateRow,
    channelId: string | null = row.channel_id,
  ): Promise<VoiceStateObject> {
    const object = await this.#object(db, row, channelId);
    events.push('VOICE_STATE_UPDATE', object);
    return object;
  }

  /**
   * The stage voice state a stage route acts on: the target's (10065 when not in voice), in a stage
   * channel (50024), `channel_id` if given naming that same channel; with the actor's permissions there.
   */
  async #stageState(
    tx: Executor,
    guildId: string,
    actorId: string,
    userId: string,
    input: { channel_id?: string | null | undefined },
  ) {
    const access = await this.#deps.access.member(tx, guildId, actorId);
    const state = await store.findVoiceState(tx, guildId, userId);
    if (!state) throw new HearthError('UnknownVoiceState');
    if (input.channel_id != null && input.channel_id !== state.channel_id)
      throw invalidForm('channel_id', FormErrors.invalid());
    const channel = await store.findChannel(tx, state.channel_id);
    if (!channel || Number(channel.type) !== ChannelTypes.GuildStageVoice)
      throw new HearthError('CannotExecuteOnChannelType');
    const permissions = await this.#deps.access.permissionsIn(tx, access, state.channel_id);
    return { access, state, permissions };
  }

  /** A voice or stage channel of the guild the member may connect to and that has room for them. */
  async #joinableChannel(tx: Executor, access: MemberAccess, channelId: string, current: string | undefined) {
    const channel = await store.findChannel(tx, channelId);
    if (!channel || channel.guild_id !== access.input.guildId) throw new HearthError('UnknownChannel');
    if (!VOICE_CHANNEL_TYPES.includes(Number(channel.type)))
      throw new HearthError('CannotExecuteOnChannelType');
    const permissions = await this.#deps.access.permissionsIn(tx, access, channelId);
    if (!has(permissions, P.Connect)) throw new HearthError('MissingPermissions');
    const limit = Number(channel.user_limit ?? 0);
    if (limit > 0 && current !== channelId && !has(permissions, P.MoveMembers)) {
      if ((await store.countInChannel(tx, channelId)) >= limit) throw new HearthError('MissingPermissions');
    }
    return channel;
  }
}
