import { GatewayIntents, GatewayOpcodes } from '@hearth/protocol';
import type { Clock, Config } from '@hearth/server';
import WebSocket from 'ws';
import { GatewayClient } from './gateway.js';
import { type StartOptions, startHearth, type TestHearth } from './hearth.js';
import type { TestGame } from './oauth.js';

/*
 * Voice test helpers that do not load @discordjs/voice (voice.ts adds the ones that do): a server with its
 * voice gateway, a bot's main gateway session, op 4, and a bare voice gateway client for exact wire checks.
 */

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };

/** A server whose voice gateway serves `wss://` with the certificate the test workers trust (voice-tls-setup). */
export function startVoiceHearth(
  clock?: Clock,
  options: StartOptions = {},
  overrides: Partial<Config> = {},
): Promise<TestHearth> {
  const cert = process.env.HEARTH_TEST_VOICE_TLS_CERT;
  const key = process.env.HEARTH_TEST_VOICE_TLS_KEY;
  if (!cert || !key)
    throw new Error('voice tests need test-support/voice-tls-setup.ts as vitest globalSetup');
  return startHearth({ voiceTlsCert: cert, voiceTlsKey: key, ...overrides }, clock, options);
}

/** A bot's main gateway session in its (one) guild, with voice states. */
export async function identifyBot(hearth: TestHearth, game: TestGame): Promise<GatewayClient> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  const intents = GatewayIntents.Guilds | GatewayIntents.GuildVoiceStates;
  client.send({ op: 2, d: { token: game.botToken, intents, properties: PROPERTIES } });
  await client.nextDispatch('READY');
  // Op 4 is served for guilds the session has received: the bot's one guild.
  await client.nextDispatch('GUILD_CREATE');
  return client;
}

export interface VoiceFrame {
  op: number;
  d: unknown;
  seq?: number;
}

/** A bare voice gateway client for exact wire assertions: every frame it receives, in order. */
export class VoiceWire {
  readonly socket: WebSocket;
  readonly frames: VoiceFrame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  #cursor = 0;
  #wake: (() => void) | undefined;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('message', (data, isBinary) => {
      const bytes = Buffer.from(data as Buffer);
      this.frames.push(
        isBinary
          ? { op: bytes[2]!, seq: bytes.readUInt16BE(0), d: bytes.subarray(3) }
          : (JSON.parse(bytes.toString('utf8')) as VoiceFrame),
      );
      this.#wake?.();
    });
    this.closed = new Promise((resolve) => {
      socket.on('close', (code, reason) => {
        resolve({ code, reason: reason.toString() });
        this.#wake?.();
      });
    });
  }

  /** Opens `wss://{endpoint}{query}`; `query` as the client sends it, e.g. `?v=8`. */
  static open(endpoint: string, query = '?v=8'): Promise<VoiceWire> {
    const socket = new WebSocket(`wss://${endpoint}/${query}`);
    const wire = new VoiceWire(socket);
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(wire));
      socket.once('error', reject);
    });
  }

  send(payload: unknown): void {
    this.socket.send(
      typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload),
    );
  }

  /** The next frame with this opcode after those handed out; rejects on close or after `timeoutMs`. */
  async next(op: number, timeoutMs = 5_000): Promise<VoiceFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.frames.findIndex((frame, i) => i >= this.#cursor && frame.op === op);
      if (index >= 0) {
        this.#cursor = index + 1;
        return this.frames[index]!;
      }
      if (this.socket.readyState === WebSocket.CLOSED) throw new Error(`closed before op ${op}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no op ${op} within ${timeoutMs} ms: ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** The close the server made. */
  async closeCode(timeoutMs = 5_000): Promise<number> {
    const timeout = new Promise<never>((_resolve, reject) =>
      setTimeout(() => reject(new Error(`not closed: ${JSON.stringify(this.frames)}`)), timeoutMs).unref(),
    );
    return (await Promise.race([this.closed, timeout])).code;
  }
}

export interface VoiceJoin {
  game: TestGame;
  gateway: GatewayClient;
  /** VOICE_SERVER_UPDATE `d`. */
  server: { token: string; guild_id: string | null; endpoint: string };
  sessionId: string;
}

/** The bot sends op 4 for `channelId` and answers what a voice client needs: token, endpoint, session. */
export async function joinVoice(
  hearth: TestHearth,
  game: TestGame,
  guildId: string,
  channelId: string,
  gateway?: GatewayClient,
): Promise<VoiceJoin> {
  const client = gateway ?? (await identifyBot(hearth, game));
  client.send({
    op: GatewayOpcodes.VoiceStateUpdate,
    d: { guild_id: guildId, channel_id: channelId, self_mute: false, self_deaf: false },
  });
  // Both dispatches come, in either order: VOICE_STATE_UPDATE through the bus, the other to the session.
  let server: VoiceJoin['server'] | undefined;
  let sessionId: string | undefined;
  while (server === undefined || sessionId === undefined) {
    const frame = await client.next(
      (f) =>
        f.t === 'VOICE_SERVER_UPDATE' ||
        (f.t === 'VOICE_STATE_UPDATE' && (f.d as { user_id?: string }).user_id === game.botUserId),
    );
    if (frame.t === 'VOICE_SERVER_UPDATE') server = frame.d as VoiceJoin['server'];
    else sessionId = (frame.d as { session_id: string }).session_id;
  }
  return { game, gateway: client, server, sessionId };
}

/** A voice gateway session through Identify (op 0 → op 2 Ready); answers the wire and Ready's `d`. */
export async function identifyVoice(
  join: VoiceJoin,
  guildId: string,
  maxDave = 0,
): Promise<{ wire: VoiceWire; ready: { ssrc: number; ip: string; port: number; modes: string[] } }> {
  const wire = await VoiceWire.open(join.server.endpoint);
  await wire.next(8);
  wire.send({
    op: 0,
    d: {
      server_id: guildId,
      user_id: join.game.botUserId,
      session_id: join.sessionId,
      token: join.server.token,
      max_dave_protocol_version: maxDave,
    },
  });
  const ready = (await wire.next(2)).d as { ssrc: number; ip: string; port: number; modes: string[] };
  return { wire, ready };
}
