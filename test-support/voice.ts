import {
  type DiscordGatewayAdapterCreator,
  entersState,
  joinVoiceChannel,
  type VoiceConnection,
  VoiceConnectionStatus,
} from '@discordjs/voice';
import { GatewayOpcodes } from '@hearth/protocol';
import WebSocket, { type RawData } from 'ws';
import type { GatewayClient } from './gateway.js';
import type { TestGame } from './oauth.js';

export * from './voice-wire.js';

/**
 * The adapter @discordjs/voice asks of a library: op 4 goes out through the bot's gateway session, its own
 * VOICE_STATE_UPDATE and its VOICE_SERVER_UPDATE come back in.
 */
export function adapterFor(client: GatewayClient, userId: string): DiscordGatewayAdapterCreator {
  return (methods) => {
    const listener = (data: RawData) => {
      const frame = JSON.parse(data.toString()) as { t?: string; d?: Record<string, unknown> };
      if (frame.t === 'VOICE_STATE_UPDATE' && frame.d?.user_id === userId) {
        methods.onVoiceStateUpdate(frame.d as never);
      } else if (frame.t === 'VOICE_SERVER_UPDATE') {
        methods.onVoiceServerUpdate(frame.d as never);
      }
    };
    client.socket.on('message', listener);
    return {
      sendPayload(payload) {
        if (client.socket.readyState !== WebSocket.OPEN) return false;
        client.send(payload);
        return true;
      },
      destroy() {
        client.socket.off('message', listener);
      },
    };
  };
}

/** An unmodified @discordjs/voice connection of the bot to `channelId`, once Ready; DAVE only when asked. */
export async function joinWithDiscordJs(
  client: GatewayClient,
  game: TestGame,
  guildId: string,
  channelId: string,
  { dave = false }: { dave?: boolean } = {},
): Promise<VoiceConnection> {
  const connection = joinVoiceChannel({
    guildId,
    channelId,
    // Connections are kept per group and guild: each bot of the test is its own group.
    group: game.botUserId,
    selfDeaf: false,
    selfMute: false,
    daveEncryption: dave,
    adapterCreator: adapterFor(client, game.botUserId),
  });
  await entersState(connection, VoiceConnectionStatus.Ready, 10_000);
  return connection;
}

/** What the tests read of @discordjs/voice's DAVE state: its davey session and the transitions not executed yet. */
export interface DaveState {
  session?: {
    ready: boolean;
    epoch: bigint | null;
    getDecryptionStats(userId: string, mediaType: number): { successes: number; passthroughs: number } | null;
  };
  pendingTransitions: Map<number, number>;
  protocolVersion?: number;
}

/** The DAVE state of a @discordjs/voice connection, once its networking has one (not public API: read only). */
export function daveOf(connection: VoiceConnection): DaveState | undefined {
  const state = connection.state as { networking?: { state: { dave?: DaveState } } };
  return state.networking?.state.dave;
}

/**
 * op 4 on a bot's main gateway, answered by its own VOICE_STATE_UPDATE and a VOICE_SERVER_UPDATE: what a
 * voice connection of the SDK needs to connect.
 */
export async function requestVoiceServer(
  client: GatewayClient,
  userId: string,
  guildId: string,
  channelId: string,
): Promise<{ sessionId: string; token: string; endpoint: string }> {
  client.send({
    op: GatewayOpcodes.VoiceStateUpdate,
    d: { guild_id: guildId, channel_id: channelId, self_mute: false, self_deaf: false },
  });
  const state = await client.next(
    (frame) => frame.t === 'VOICE_STATE_UPDATE' && (frame.d as { user_id?: string }).user_id === userId,
  );
  const server = await client.nextDispatch('VOICE_SERVER_UPDATE');
  const { token, endpoint } = server.d as { token: string; endpoint: string };
  return { sessionId: (state.d as { session_id: string }).session_id, token, endpoint };
}
