import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Client as BrowserClient } from '../../src/browser-client.js';
import type { FeatureContext } from '../../src/feature.js';
import { Logger, LoggingSeverity } from '../../src/logging.js';
import { Client } from '../../src/node-client.js';
import { CallError, CallStatus } from '../../src/voice/call-status.js';
import { AudioSystem, ClientCreateOptions } from '../../src/voice/client-create-options.js';
import { AudioModeType } from '../../src/voice/gate.js';
import type { VoiceNetwork, VoiceSocketLike } from '../../src/voice/network.js';
import { xchachaAead } from '../../src/voice/transport-crypto.js';
import { JOIN_TIMEOUT_MS, NO_VOICE_NETWORK, Voice } from '../../src/voice/voice.js';

/**
 * The Call's signalling and settings through the library's seams: op 4 with the lobby as the channel,
 * LOBBY_VOICE_STATE_UPDATE and LOBBY_VOICE_SERVER_UPDATE opening the voice gateway (v8, Identify), EndCall, the join
 * timeout, participants and voice states, the settings' ranges, and the Client's voice options.
 */

const LOBBY = '1300000000000000001';
const ME = '1200000000000000001';
const OTHER = '1200000000000000002';

/** A voice gateway socket that records what the client sends and lets the test speak for the server. */
class FakeSocket implements VoiceSocketLike {
  readyState = 1;
  readonly sent: unknown[] = [];
  readonly #listeners = new Map<string, Array<(event: never) => void>>();
  constructor(readonly url: string) {}
  send(data: string | Uint8Array): void {
    this.sent.push(typeof data === 'string' ? JSON.parse(data) : data);
  }
  close(): void {
    this.readyState = 3;
  }
  addEventListener(type: string, listener: (event: never) => void): void {
    this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
  }
  emit(type: string, event: unknown): void {
    for (const listener of this.#listeners.get(type) ?? []) listener(event as never);
  }
}

function fakeNetwork(sockets: FakeSocket[]): VoiceNetwork {
  return {
    openSocket: (url) => {
      const socket = new FakeSocket(url);
      sockets.push(socket);
      return socket;
    },
    openUdp: () => new Promise(() => undefined),
    ciphers: { aead_aes256_gcm_rtpsize: xchachaAead },
    opus: () => {
      throw new Error('no codec in this test');
    },
  };
}

function fakeFeature(sent: Array<{ op: number; d: unknown }>) {
  const listeners = new Map<string, Array<(data: unknown) => void>>();
  let ready = true;
  const feature: FeatureContext = {
    call: () => Promise.reject(new Error('no HTTP here')),
    on: (event, listener) => listeners.set(event, [...(listeners.get(event) ?? []), listener]),
    logger: new Logger('debug'),
    currentUserId: () => ME,
    applicationId: () => 1n,
    send: (op, d) => {
      if (!ready) return false;
      sent.push({ op, d });
      return true;
    },
  };
  return {
    feature,
    dispatch: (event: string, data: unknown) => {
      for (const listener of listeners.get(event) ?? []) listener(data);
    },
    notReady: () => {
      ready = false;
    },
  };
}

describe('a lobby call through the Voice feature', () => {
  let sent: Array<{ op: number; d: unknown }>;
  let sockets: FakeSocket[];
  let gateway: ReturnType<typeof fakeFeature>;
  let voice: Voice;

  beforeEach(() => {
    vi.useFakeTimers();
    sent = [];
    sockets = [];
    gateway = fakeFeature(sent);
    voice = new Voice(gateway.feature, fakeNetwork(sockets));
  });
  afterEach(() => vi.useRealTimers());

  it('op 4 names the lobby as the channel; the two answers open wss://endpoint/?v=8 and Identify', () => {
    const call = voice.start(LOBBY, undefined, undefined);
    const statuses: number[] = [];
    call?.SetStatusChangedCallback((status) => statuses.push(status));
    expect(call?.GetStatus()).toBe(CallStatus.Joining);
    expect(sent).toEqual([
      { op: 4, d: { guild_id: null, channel_id: LOBBY, self_mute: false, self_deaf: false } },
    ]);
    expect(voice.start(LOBBY, undefined, undefined)).toBe(call);

    gateway.dispatch('LOBBY_VOICE_STATE_UPDATE', {
      lobby_id: LOBBY,
      user_id: ME,
      channel_id: LOBBY,
      session_id: 'sess-1',
      self_mute: false,
      self_deaf: false,
    });
    expect(sockets).toHaveLength(0);
    gateway.dispatch('LOBBY_VOICE_SERVER_UPDATE', {
      token: 'voice-token',
      lobby_id: LOBBY,
      endpoint: 'voice.example:8443',
    });
    expect(statuses).toEqual([CallStatus.Connecting]);
    expect(sockets.map((socket) => socket.url)).toEqual(['wss://voice.example:8443/?v=8']);

    sockets[0]?.emit('message', { data: JSON.stringify({ op: 8, d: { heartbeat_interval: 1000 } }) });
    expect(sockets[0]?.sent).toEqual([
      {
        op: 0,
        d: {
          server_id: LOBBY,
          user_id: ME,
          session_id: 'sess-1',
          token: 'voice-token',
          max_dave_protocol_version: 0,
        },
      },
    ]);
    vi.advanceTimersByTime(1000);
    expect(sockets[0]?.sent[1]).toEqual({ op: 3, d: { t: expect.any(Number), seq_ack: -1 } });
    sockets[0]?.emit('message', { data: JSON.stringify({ op: 11, d: { user_ids: [OTHER] }, seq: 4 }) });
    vi.advanceTimersByTime(1000);
    expect(sockets[0]?.sent[2]).toEqual({ op: 3, d: { t: expect.any(Number), seq_ack: 4 } });
    sockets[0]?.emit('message', {
      data: JSON.stringify({
        op: 2,
        d: { ssrc: 7, ip: '127.0.0.1', port: 5000, modes: ['aead_aes256_gcm_rtpsize'] },
      }),
    });
    expect(statuses).toEqual([CallStatus.Connecting, CallStatus.SignalingConnected]);
  });

  it('a lost connection reaches Disconnected with the close code, and stays there until ended and started again', () => {
    const call = voice.start(LOBBY, undefined, undefined);
    const reports: number[][] = [];
    call?.SetStatusChangedCallback((status, error, detail) => reports.push([status, error, detail]));
    gateway.dispatch('LOBBY_VOICE_STATE_UPDATE', {
      lobby_id: LOBBY,
      user_id: ME,
      channel_id: LOBBY,
      session_id: 's',
    });
    gateway.dispatch('LOBBY_VOICE_SERVER_UPDATE', {
      token: 't',
      lobby_id: LOBBY,
      endpoint: 'h:1',
    });
    sockets[0]?.emit('close', { code: 1006, reason: '' });
    expect(reports.at(-1)).toEqual([CallStatus.Disconnected, CallError.SignalingUnexpectedClose, 1006]);
    expect(voice.get(LOBBY)).toBe(call);
    expect(voice.end(LOBBY)).toBe(true);
    expect(sent.at(-1)).toEqual({
      op: 4,
      d: { guild_id: null, channel_id: null, self_mute: false, self_deaf: false },
    });
    expect(voice.get(LOBBY)).toBeUndefined();
    const again = voice.start(LOBBY, undefined, undefined);
    expect(again).not.toBe(call);
    expect(again?.GetStatus()).toBe(CallStatus.Joining);
  });

  it('4015 resumes on a new socket with seq_ack (Reconnecting, then Connected on Resumed); 4017 is Forbidden', () => {
    const call = voice.start(LOBBY, undefined, undefined);
    const statuses: number[] = [];
    call?.SetStatusChangedCallback((status) => statuses.push(status));
    gateway.dispatch('LOBBY_VOICE_STATE_UPDATE', {
      lobby_id: LOBBY,
      user_id: ME,
      channel_id: LOBBY,
      session_id: 's',
    });
    gateway.dispatch('LOBBY_VOICE_SERVER_UPDATE', { token: 't', lobby_id: LOBBY, endpoint: 'h:1' });
    sockets[0]?.emit('message', { data: Uint8Array.of(0, 9, 25, 1, 2) });
    sockets[0]?.emit('close', { code: 4015, reason: 'crashed' });
    expect(statuses.at(-1)).toBe(CallStatus.Reconnecting);
    sockets[1]?.emit('message', { data: JSON.stringify({ op: 8, d: { heartbeat_interval: 1000 } }) });
    expect(sockets[1]?.sent).toEqual([
      { op: 7, d: { server_id: LOBBY, session_id: 's', token: 't', seq_ack: 9 } },
    ]);
    sockets[1]?.emit('message', { data: JSON.stringify({ op: 9, d: null }) });
    expect(statuses.at(-1)).toBe(CallStatus.Connected);
    const reports: number[][] = [];
    call?.SetStatusChangedCallback((status, error, detail) => reports.push([status, error, detail]));
    sockets[1]?.emit('close', { code: 4017, reason: 'E2EE required' });
    expect(reports).toEqual([[CallStatus.Disconnected, CallError.Forbidden, 4017]]);
  });

  it('no answer to op 4 within the join timeout: Disconnected with JoinTimeout', () => {
    const call = voice.start(LOBBY, undefined, undefined);
    const reports: number[][] = [];
    call?.SetStatusChangedCallback((status, error, detail) => reports.push([status, error, detail]));
    vi.advanceTimersByTime(JOIN_TIMEOUT_MS - 1);
    expect(reports).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(reports).toEqual([[CallStatus.Disconnected, CallError.JoinTimeout, 0]]);
  });

  it('self mute and deafen go out in op 4; participants and their voice states come from LOBBY_VOICE_STATE_UPDATE', () => {
    const call = voice.start(LOBBY, undefined, undefined);
    if (!call) throw new Error('no call');
    const changes: string[] = [];
    call.SetParticipantChangedCallback((userId, added) =>
      changes.push(`${userId} ${added ? 'joined' : 'left'}`),
    );
    call.SetOnVoiceStateChangedCallback((userId) => changes.push(`${userId} changed`));
    call.SetSelfMute(true);
    call.SetSelfDeaf(true);
    expect(sent.slice(1).map((frame) => frame.d)).toEqual([
      { guild_id: null, channel_id: LOBBY, self_mute: true, self_deaf: false },
      { guild_id: null, channel_id: LOBBY, self_mute: true, self_deaf: true },
    ]);
    expect([call.GetSelfMute(), call.GetSelfDeaf()]).toEqual([true, true]);
    gateway.dispatch('LOBBY_VOICE_STATE_UPDATE', {
      lobby_id: LOBBY,
      user_id: OTHER,
      channel_id: LOBBY,
      self_mute: false,
      self_deaf: false,
    });
    const handle = call.GetVoiceStateHandle(OTHER);
    expect(handle?.SelfMute()).toBe(false);
    gateway.dispatch('LOBBY_VOICE_STATE_UPDATE', {
      lobby_id: LOBBY,
      user_id: OTHER,
      channel_id: LOBBY,
      self_mute: true,
      self_deaf: false,
    });
    expect(handle?.SelfMute()).toBe(true);
    expect(call.GetParticipants()).toEqual([BigInt(OTHER)]);
    gateway.dispatch('LOBBY_VOICE_STATE_UPDATE', { lobby_id: LOBBY, user_id: OTHER, channel_id: null });
    expect(call.GetParticipants()).toEqual([]);
    expect(call.GetVoiceStateHandle(OTHER)).toBeUndefined();
    expect(changes).toEqual([`${OTHER} joined`, `${OTHER} changed`, `${OTHER} left`]);
  });

  it('the voice gateway roster (op 11, op 13) adds and removes participants', () => {
    const call = voice.start(LOBBY, undefined, undefined);
    const changes: string[] = [];
    call?.SetParticipantChangedCallback((userId, added) => changes.push(`${userId} ${added}`));
    gateway.dispatch('LOBBY_VOICE_STATE_UPDATE', {
      lobby_id: LOBBY,
      user_id: ME,
      channel_id: LOBBY,
      session_id: 's',
    });
    gateway.dispatch('LOBBY_VOICE_SERVER_UPDATE', { token: 't', lobby_id: LOBBY, endpoint: 'h:1' });
    sockets[0]?.emit('message', { data: JSON.stringify({ op: 11, d: { user_ids: [OTHER] }, seq: 1 }) });
    expect(call?.GetParticipants()).toEqual([BigInt(ME), BigInt(OTHER)]);
    sockets[0]?.emit('message', { data: JSON.stringify({ op: 13, d: { user_id: OTHER }, seq: 2 }) });
    expect(call?.GetParticipants()).toEqual([BigInt(ME)]);
    expect(changes).toEqual([`${ME} true`, `${OTHER} true`, `${OTHER} false`]);
  });

  it('settings: defaults, ranges at the edge and one past', () => {
    const call = voice.start(LOBBY, undefined, undefined);
    if (!call) throw new Error('no call');
    expect(call.GetAudioMode()).toBe(AudioModeType.MODE_VAD);
    call.SetAudioMode(AudioModeType.MODE_PTT);
    expect(call.GetAudioMode()).toBe(AudioModeType.MODE_PTT);
    expect(call.GetPTTReleaseDelay()).toBe(0);
    call.SetPTTReleaseDelay(0xffffffff);
    expect(() => call.SetPTTReleaseDelay(-1)).toThrow(RangeError);
    expect(() => call.SetPTTReleaseDelay(1.5)).toThrow(RangeError);
    expect(call.GetVADThreshold().VadThreshold()).toBe(-60);
    expect(call.GetVADThreshold().Automatic()).toBe(false);
    call.SetVADThreshold(true, -100);
    call.SetVADThreshold(false, 0);
    expect(() => call.SetVADThreshold(false, 0.1)).toThrow(RangeError);
    expect(() => call.SetVADThreshold(false, -100.1)).toThrow(RangeError);
    expect(call.GetParticipantVolume(OTHER)).toBe(100);
    call.SetParticipantVolume(OTHER, 200);
    expect(call.GetParticipantVolume(OTHER)).toBe(200);
    expect(() => call.SetParticipantVolume(OTHER, 200.5)).toThrow(RangeError);
    expect(() => call.SetParticipantVolume(OTHER, -1)).toThrow(RangeError);
    call.SetLocalMute(OTHER, true);
    expect(call.GetLocalMute(OTHER)).toBe(true);
    expect(call.GetChannelId()).toBe(BigInt(LOBBY));
  });

  it('refuses without a lobby id or a Ready client', () => {
    expect(voice.start('0', undefined, undefined)).toBeUndefined();
    expect(voice.start('lobby', undefined, undefined)).toBeUndefined();
    gateway.notReady();
    expect(voice.start(LOBBY, undefined, undefined)).toBeUndefined();
    expect(voice.all()).toEqual([]);
  });
});

describe('the Client’s voice surface', () => {
  it('in a browser StartCall runs on the browser voice network: not Ready, it answers no call and says why', () => {
    const client = new BrowserClient('http://127.0.0.1:1/api', 'http://127.0.0.1:1', { build: 'debug' });
    const lines: string[] = [];
    client.AddLogCallback((message) => lines.push(message), LoggingSeverity.Error);
    expect(client.StartCall(LOBBY)).toBeUndefined();
    expect(
      client.StartCallWithAudioCallbacks(
        LOBBY,
        () => undefined,
        () => undefined,
      ),
    ).toBeUndefined();
    expect(lines).toEqual(['StartCall needs a Ready client', 'StartCall needs a Ready client']);
    expect(client.GetCalls()).toEqual([]);
  });

  it('without a voice network StartCall fails clearly', () => {
    const sent: Array<{ op: number; d: unknown }> = [];
    const { feature } = fakeFeature(sent);
    const lines: string[] = [];
    feature.logger.add((message) => lines.push(message), LoggingSeverity.Error);
    expect(new Voice(feature, undefined).start(String(LOBBY), undefined, undefined)).toBeUndefined();
    expect(lines).toEqual([NO_VOICE_NETWORK]);
    expect(sent).toEqual([]);
  });

  it('on Node, not Ready: no call; EndCall and EndCalls still answer', async () => {
    const client = new Client('http://127.0.0.1:1/api', 'http://127.0.0.1:1', { build: 'debug' });
    expect(client.StartCall(LOBBY)).toBeUndefined();
    expect(client.GetCall(LOBBY)).toBeUndefined();
    await new Promise<void>((resolve) => client.EndCall(LOBBY, resolve));
    await new Promise<void>((resolve) => client.EndCalls(resolve));
  });

  it('SetVoiceLogDir writes the log lines of at least that severity to voice.log', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'hearth-voice-log-')), 'logs');
    const client = new Client('http://127.0.0.1:1/api', 'http://127.0.0.1:1', { build: 'debug' });
    client.SetVoiceLogDir(dir, LoggingSeverity.Error);
    client.StartCall(LOBBY);
    const text = readFileSync(join(dir, 'voice.log'), 'utf8');
    expect(text).toMatch(/^\d{4}-\d\d-\d\dT.* 4 StartCall needs a Ready client\n$/);
  });

  it('carries ClientCreateOptions, the engine-managed audio session and the AEC dump flag', () => {
    const options = new ClientCreateOptions();
    expect([
      options.CpuAffinityMask(),
      options.ExperimentalAndroidPreventCommsForBluetooth(),
      options.ExperimentalAudioSystem(),
    ]).toEqual([undefined, false, AudioSystem.Standard]);
    options.SetCpuAffinityMask(0xffff_ffff_ffff_ffffn);
    options.SetExperimentalAndroidPreventCommsForBluetooth(true);
    options.SetExperimentalAudioSystem(AudioSystem.Game);
    expect(() => options.SetCpuAffinityMask(-1)).toThrow(RangeError);
    expect(() => options.SetCpuAffinityMask(2n ** 64n)).toThrow(RangeError);
    expect(() => options.SetExperimentalAudioSystem(2 as AudioSystem)).toThrow(RangeError);
    const client = new Client(undefined, undefined, { createOptions: options });
    expect(client.GetClientCreateOptions().CpuAffinityMask()).toBe(0xffff_ffff_ffff_ffffn);
    expect(client.GetClientCreateOptions().ExperimentalAudioSystem()).toBe(AudioSystem.Game);
    expect([client.GetEngineManagedAudioSession(), client.GetAecDump()]).toEqual([false, false]);
    client.SetEngineManagedAudioSession(true);
    client.SetAecDump(true);
    expect([client.GetEngineManagedAudioSession(), client.GetAecDump()]).toEqual([true, true]);
  });
});
