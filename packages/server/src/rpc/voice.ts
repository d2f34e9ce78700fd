import { RpcErrorCodes } from '@hearth/protocol';
import type { GatewayDispatch } from './server-link.js';
import { RpcError } from './session.js';

/** A gateway voice state (GUILDS.md §3.5) as the agent keeps it. */
export interface VoiceState {
  guild_id: string;
  channel_id: string | null;
  user_id: string;
  member?: { nick?: string | null; user?: Record<string, unknown> } | undefined;
  mute: boolean;
  deaf: boolean;
  self_mute: boolean;
  self_deaf: boolean;
  suppress: boolean;
}

/** A voice state change seen by the agent: the state before (if any) and after (channel null: left). */
export interface VoiceStateChange {
  before: VoiceState | undefined;
  after: VoiceState;
}

/** The local voice settings of the platform client (DOCS rpc.mdx GET_VOICE_SETTINGS): kept by the agent. */
export interface VoiceSettings {
  input: { device_id: string; volume: number; available_devices: Array<{ id: string; name: string }> };
  output: { device_id: string; volume: number; available_devices: Array<{ id: string; name: string }> };
  mode: {
    type: 'VOICE_ACTIVITY' | 'PUSH_TO_TALK';
    auto_threshold: boolean;
    threshold: number;
    shortcut: unknown[];
    delay: number;
  };
  automatic_gain_control: boolean;
  echo_cancellation: boolean;
  noise_suppression: boolean;
  qos: boolean;
  silence_warning: boolean;
  deaf: boolean;
  mute: boolean;
}

/** Per-user settings of SET_USER_VOICE_SETTINGS (DOCS rpc.mdx): volume 0–200, pan 0.0–1.0 per side. */
export interface UserVoiceSettings {
  user_id: string;
  pan: { left: number; right: number };
  volume: number;
  mute: boolean;
}

const DEFAULT_DEVICE = { id: 'default', name: 'Default' };

/**
 * Voice as the platform client sees it: every voice state of the user's guilds (from GUILD_CREATE and
 * VOICE_STATE_UPDATE), the channel the user is in, and the local settings. Hearth has no voice media server
 * yet, so nothing speaks: SPEAKING_* never fire.
 */
export class VoiceTracker {
  readonly #userId: string;
  readonly #states = new Map<string, VoiceState>();
  readonly #userSettings = new Map<string, UserVoiceSettings>();
  readonly settings: VoiceSettings = {
    input: { device_id: 'default', volume: 100, available_devices: [DEFAULT_DEVICE] },
    output: { device_id: 'default', volume: 100, available_devices: [DEFAULT_DEVICE] },
    mode: { type: 'VOICE_ACTIVITY', auto_threshold: true, threshold: -60, shortcut: [], delay: 20 },
    automatic_gain_control: true,
    echo_cancellation: true,
    noise_suppression: true,
    qos: false,
    silence_warning: true,
    deaf: false,
    mute: false,
  };

  constructor(userId: string) {
    this.#userId = userId;
  }

  /** Reads a gateway dispatch; answers the voice state changes it made. */
  received(dispatch: GatewayDispatch): VoiceStateChange[] {
    if (dispatch.t === 'GUILD_CREATE') {
      const guildId = String(dispatch.d['id']);
      const states = (dispatch.d['voice_states'] as Array<Record<string, unknown>> | undefined) ?? [];
      for (const [key, state] of this.#states) if (state.guild_id === guildId) this.#states.delete(key);
      for (const raw of states) this.#states.set(key(guildId, String(raw['user_id'])), toState(guildId, raw));
      return [];
    }
    if (dispatch.t === 'GUILD_DELETE') {
      const guildId = String(dispatch.d['id']);
      for (const [key, state] of this.#states) if (state.guild_id === guildId) this.#states.delete(key);
      return [];
    }
    if (dispatch.t !== 'VOICE_STATE_UPDATE') return [];
    const guildId = String(dispatch.d['guild_id']);
    const after = toState(guildId, dispatch.d);
    const id = key(guildId, after.user_id);
    const before = this.#states.get(id);
    if (after.channel_id === null) this.#states.delete(id);
    else this.#states.set(id, after);
    return [{ before, after }];
  }

  /** The voice channel the agent's user is in, or undefined. */
  selected(): VoiceState | undefined {
    for (const state of this.#states.values()) {
      if (state.user_id === this.#userId && state.channel_id !== null) return state;
    }
    return undefined;
  }

  statesIn(channelId: string): VoiceState[] {
    return [...this.#states.values()].filter((state) => state.channel_id === channelId);
  }

  /** SET_USER_VOICE_SETTINGS: the new settings of one user, as merged. */
  setUserSettings(args: Record<string, unknown>): UserVoiceSettings {
    const userId = args['user_id'];
    if (typeof userId !== 'string' || !/^\d{1,20}$/.test(userId)) {
      throw new RpcError(RpcErrorCodes.InvalidUser, 'Invalid user id');
    }
    const current = this.userSettings(userId);
    const next: UserVoiceSettings = { ...current, pan: { ...current.pan } };
    const { pan, volume, mute } = args;
    if (volume !== undefined) {
      if (typeof volume !== 'number' || !Number.isFinite(volume) || volume < 0 || volume > 200) {
        throw new RpcError(RpcErrorCodes.InvalidPayload, 'volume must be a number from 0 to 200');
      }
      next.volume = volume;
    }
    if (mute !== undefined) {
      if (typeof mute !== 'boolean')
        throw new RpcError(RpcErrorCodes.InvalidPayload, 'mute must be a boolean');
      next.mute = mute;
    }
    if (pan !== undefined) {
      const sides = pan as { left?: unknown; right?: unknown } | null;
      const side = (value: unknown) => typeof value === 'number' && value >= 0 && value <= 1;
      if (typeof sides !== 'object' || sides === null || !side(sides.left) || !side(sides.right)) {
        throw new RpcError(RpcErrorCodes.InvalidPayload, 'pan needs left and right from 0.0 to 1.0');
      }
      next.pan = { left: sides.left as number, right: sides.right as number };
    }
    this.#userSettings.set(userId, next);
    return next;
  }

  userSettings(userId: string): UserVoiceSettings {
    return (
      this.#userSettings.get(userId) ?? {
        user_id: userId,
        pan: { left: 1, right: 1 },
        volume: 100,
        mute: false,
      }
    );
  }

  /** The RPC voice state object (DOCS rpc.mdx VOICE_STATE_CREATE) of a gateway voice state. */
  toRpcVoiceState(state: VoiceState): Record<string, unknown> {
    const local = this.userSettings(state.user_id);
    return {
      voice_state: {
        mute: state.mute,
        deaf: state.deaf,
        self_mute: state.self_mute,
        self_deaf: state.self_deaf,
        suppress: state.suppress,
      },
      user: state.member?.user ?? { id: state.user_id },
      nick: state.member?.nick ?? null,
      volume: local.volume,
      mute: local.mute,
      pan: local.pan,
    };
  }
}

function key(guildId: string, userId: string): string {
  return `${guildId}:${userId}`;
}

function toState(guildId: string, raw: Record<string, unknown>): VoiceState {
  return {
    guild_id: guildId,
    channel_id: typeof raw['channel_id'] === 'string' ? raw['channel_id'] : null,
    user_id: String(raw['user_id']),
    member: raw['member'] as VoiceState['member'],
    mute: raw['mute'] === true,
    deaf: raw['deaf'] === true,
    self_mute: raw['self_mute'] === true,
    self_deaf: raw['self_deaf'] === true,
    suppress: raw['suppress'] === true,
  };
}
