// The voice-relay baseline: a bare Node `dgram` relay doing the same work per packet as Hearth's forwarder
// and nothing else: answer IP discovery, open each RTP packet (aead_aes256_gcm_rtpsize, node:crypto) with
// the sender's key, seal it for every other member with that member's key and counter, send. Prints
// `bare-voice-relay listening on udp://127.0.0.1:<port>`, then answers over IPC (lib/ipc.ts):
//   {cmd: 'members', members: [{ssrc, key (hex)}…]} → every member joins the one call
//   {cmd: 'stats'}                                  → {received, forwarded, dropped}
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { answerRequests } from '../lib/ipc.js';

interface Member {
  ssrc: number;
  key: Buffer;
  address: string | undefined;
  port: number;
  counter: number;
}

const members = new Map<number, Member>();
const stats = { received: 0, forwarded: 0, dropped: 0 };
const socket = createSocket('udp4');
const iv = Buffer.alloc(12);

socket.on('message', (packet, from) => {
  stats.received += 1;
  if (packet.length === 74 && packet.readUInt16BE(0) === 1) {
    const member = members.get(packet.readUInt32BE(4));
    if (!member) return;
    member.address = from.address;
    member.port = from.port;
    const reply = Buffer.alloc(74);
    reply.writeUInt16BE(2, 0);
    reply.writeUInt16BE(70, 2);
    reply.writeUInt32BE(member.ssrc, 4);
    reply.write(from.address, 8);
    reply.writeUInt16BE(from.port, 72);
    socket.send(reply, from.port, from.address);
    return;
  }
  const sender = members.get(packet.readUInt32BE(8));
  const headerBytes = 12 + 4 * (packet[0]! & 0x0f) + (packet[0]! & 0x10 ? 4 : 0);
  if (!sender || packet.length < headerBytes + 20) {
    stats.dropped += 1;
    return;
  }
  const header = packet.subarray(0, headerBytes);
  let plaintext: Buffer;
  try {
    iv.fill(0);
    packet.copy(iv, 0, packet.length - 4);
    const decipher = createDecipheriv('aes-256-gcm', sender.key, iv);
    decipher.setAAD(header);
    decipher.setAuthTag(packet.subarray(packet.length - 20, packet.length - 4));
    plaintext = Buffer.concat([
      decipher.update(packet.subarray(headerBytes, packet.length - 20)),
      decipher.final(),
    ]);
  } catch {
    stats.dropped += 1;
    return;
  }
  for (const receiver of members.values()) {
    if (receiver === sender || receiver.address === undefined) continue;
    receiver.counter = (receiver.counter + 1) >>> 0;
    iv.fill(0);
    iv.writeUInt32BE(receiver.counter, 0);
    const cipher = createCipheriv('aes-256-gcm', receiver.key, iv);
    cipher.setAAD(header);
    const body = cipher.update(plaintext);
    cipher.final();
    const nonce = Buffer.alloc(4);
    nonce.writeUInt32BE(receiver.counter, 0);
    socket.send(Buffer.concat([header, body, cipher.getAuthTag(), nonce]), receiver.port, receiver.address);
    stats.forwarded += 1;
  }
});

await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));

answerRequests(async (request) => {
  if (request.cmd === 'members') {
    for (const member of request.members as Array<{ ssrc: number; key: string }>) {
      members.set(member.ssrc, {
        ssrc: member.ssrc,
        key: Buffer.from(member.key, 'hex'),
        address: undefined,
        port: 0,
        counter: 0,
      });
    }
    return null;
  }
  if (request.cmd === 'stats') return stats;
  throw new Error(`unknown command ${request.cmd}`);
});
console.log(`bare-voice-relay listening on udp://127.0.0.1:${socket.address().port}`);
