import {
  type DiscordGatewayAdapterCreator,
  entersState,
  joinVoiceChannel,
  type VoiceConnection,
  VoiceConnectionStatus,
} from '@discordjs/voice';
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

/** An unmodified @discordjs/voice connection of the bot to `channelId`, once Ready. */
export async function joinWithDiscordJs(
  client: GatewayClient,
  game: TestGame,
  guildId: string,
  channelId: string,
): Promise<VoiceConnection> {
  const connection = joinVoiceChannel({
    guildId,
    channelId,
    // Connections are kept per group and guild: each bot of the test is its own group.
    group: game.botUserId,
    selfDeaf: false,
    selfMute: false,
    daveEncryption: false,
    adapterCreator: adapterFor(client, game.botUserId),
  });
  await entersState(connection, VoiceConnectionStatus.Ready, 10_000);
  return connection;
}
