import { EndBehaviorType, type VoiceConnection } from '@discordjs/voice';
import type { GatewayClient } from './gateway.js';
import type { TestGame } from './oauth.js';

/** Audio through unmodified @discordjs/voice clients: marker frames sent, counted where they arrive. */
export interface Peer {
  game: TestGame;
  gateway: GatewayClient;
  connection: VoiceConnection;
}

/** An Opus-sized marker frame: sender tag, sequence number, filler. */
export function frame(tag: number, seq: number): Buffer {
  const bytes = Buffer.alloc(40, 0x55);
  bytes.write('HRTH', 0);
  bytes.writeUInt8(tag, 4);
  bytes.writeUInt32BE(seq, 5);
  return bytes;
}

/** Starts `listener` receiving `speaker`'s frames: the set of sequence numbers seen, checked byte for byte. */
export function receive(listener: Peer, speaker: Peer, tag: number): Set<number> {
  const seen = new Set<number>();
  const stream = listener.connection.receiver.subscribe(speaker.game.botUserId, {
    end: { behavior: EndBehaviorType.Manual },
  });
  stream.on('data', (packet: Buffer) => {
    if (packet.length === 40 && packet.toString('latin1', 0, 4) === 'HRTH' && packet[4] === tag) {
      const seq = packet.readUInt32BE(5);
      if (packet.equals(frame(tag, seq))) seen.add(seq);
    }
  });
  return seen;
}

/** The speaker announces itself (op 5) and waits until the listener maps its SSRC, then sends. */
export async function speak(
  speaker: Peer,
  listener: Peer,
  tag: number,
  first = 0,
  count = 100,
): Promise<void> {
  speaker.connection.setSpeaking(true);
  const ssrcs = listener.connection.receiver.ssrcMap;
  if (!ssrcs.get(speaker.game.botUserId)) {
    await new Promise<void>((resolve) => {
      const check = () => {
        if (ssrcs.get(speaker.game.botUserId)) {
          ssrcs.off('create', check);
          resolve();
        }
      };
      ssrcs.on('create', check);
    });
  }
  for (let seq = first; seq < first + count; seq += 1) {
    speaker.connection.playOpusPacket(frame(tag, seq));
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}
