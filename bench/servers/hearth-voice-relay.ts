// Hearth's voice forwarder for the voice-relay benchmark, in its own process: the UdpForwarder the voice
// gateway drives (domains/voice/media.ts), on 127.0.0.1 with a free port, driven here through the same
// VoiceMedia calls (add at Ready, describe at Session Description). Prints
// `hearth-voice-relay listening on udp://127.0.0.1:<port>`, then answers over IPC (lib/ipc.ts):
//   {cmd: 'members', members: [{ssrc, key (hex)}…]} → every member joins one call, aead_aes256_gcm_rtpsize
//   {cmd: 'stats'}                                  → the forwarder's counters
import { VoiceEncryptionModes } from '@hearth/protocol';
import { UdpForwarder } from '../../packages/server/src/domains/voice/media.js';
import { transportCryptoReady } from '../../packages/server/src/domains/voice/transport-crypto.js';
import { answerRequests } from '../lib/ipc.js';

await transportCryptoReady;
const forwarder = await UdpForwarder.bind('127.0.0.1', { first: 0, last: 0 });

answerRequests(async (request) => {
  if (request.cmd === 'members') {
    for (const member of request.members as Array<{ ssrc: number; key: string }>) {
      forwarder.add({
        ssrc: member.ssrc,
        callId: 'bench-call',
        userId: String(member.ssrc),
        rights: { send: true, receive: true },
      });
      forwarder.describe(
        member.ssrc,
        VoiceEncryptionModes.AeadAes256GcmRtpSize,
        Buffer.from(member.key, 'hex'),
      );
    }
    return null;
  }
  if (request.cmd === 'stats') return forwarder.stats;
  throw new Error(`unknown command ${request.cmd}`);
});
console.log(`hearth-voice-relay listening on udp://127.0.0.1:${forwarder.port}`);
