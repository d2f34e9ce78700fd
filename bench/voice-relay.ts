import { createCipheriv, randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { join } from 'node:path';
import type { Benchmark, Figures, Result } from './benchmark.js';
import { type ServerProcess, startServer } from './lib/children.js';
import { ROOT } from './lib/hearth.js';
import { median, percentile } from './lib/load.js';
import { progress } from './lib/progress.js';

const SPEAKERS = 10;
const LISTENERS = 50;
/** Packets per second each speaker sends: a real speaker (one 20 ms frame every 20 ms). */
const RATE = 50;
const ROUND_MS = 3_000;
const ROUNDS = 3;
const PAYLOAD_BYTES = 60;

interface Member {
  ssrc: number;
  key: Buffer;
  socket: Socket;
  counter: number;
  sequence: number;
}

interface Tally {
  received: number;
  latenciesUs: number[];
}

/**
 * One call of 10 speakers and 50 listeners on the voice forwarder (domains/voice/media.ts) in its own process:
 * each packet opened with its sender's aead_aes256_gcm_rtpsize key and sealed for each of the 59 others,
 * beside a bare `dgram` relay doing the same decrypt and re-encrypt. Speakers and listeners are UDP sockets of
 * this process; a packet's send time (µs) rides in its RTP timestamp, so every delivery gives a latency.
 */
const voiceRelay: Benchmark = {
  name: 'voice-relay',
  description: '10 speakers, 50 listeners in one call, rtpsize AES-GCM re-encryption (packets forwarded/s)',
  timeoutSeconds: 180,
  async run(): Promise<Result> {
    const servers: ServerProcess[] = [];
    try {
      progress('  starting the Hearth voice forwarder and the bare relay');
      const hearth = await startRelay(servers, 'hearth-voice-relay', 'bench/servers/hearth-voice-relay.ts');
      const bare = await startRelay(servers, 'bare-voice-relay', 'bench/baseline/bare-voice-relay.ts');
      const sides = [
        { label: 'bare dgram relay', relay: bare, members: await call(bare), rounds: [] as Round[] },
        { label: 'Hearth', relay: hearth, members: await call(hearth), rounds: [] as Round[] },
      ];
      for (const side of sides) await round(side.members, portOf(side.relay), 1_000);
      for (let i = 1; i <= ROUNDS; i++) {
        for (const side of i % 2 === 1 ? sides : [...sides].reverse()) {
          progress(`  round ${i}/${ROUNDS}: ${side.label}`);
          side.rounds.push(await round(side.members, portOf(side.relay), ROUND_MS));
          side.relay.assertAlive();
        }
      }
      const [baseline, subject] = sides.map((side) => figures(side.label, side.rounds)) as [Figures, Figures];
      for (const side of sides) for (const member of side.members) member.socket.close();
      return {
        unit: 'packets/s',
        baseline,
        hearth: subject,
        ratio: subject.throughput / baseline.throughput,
        notes: [
          `${SPEAKERS} speakers × ${RATE} packets/s offered (${SPEAKERS * RATE} in/s, ` +
            `${SPEAKERS * RATE * (SPEAKERS + LISTENERS - 1)} out/s), ${PAYLOAD_BYTES}-byte payloads; ` +
            `${ROUNDS} rounds of ${ROUND_MS / 1000} s per side (AB BA…), medians; latency = send → delivery ` +
            'through the relay on loopback, the bench process sending and receiving on the same cores',
        ],
      };
    } finally {
      await Promise.allSettled(servers.map((server) => server.stop()));
    }
  },
};

export default voiceRelay;

interface Round {
  packetsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

async function startRelay(servers: ServerProcess[], name: string, script: string): Promise<ServerProcess> {
  const server = await startServer({
    name,
    args: ['--import', 'tsx', join(ROOT, script)],
    ipc: true,
    cwd: ROOT,
    ready: new RegExp(`^${name} listening on (udp://\\S+)$`),
    timeoutMs: 30_000,
  });
  servers.push(server);
  return server;
}

function portOf(relay: ServerProcess): number {
  return Number(new URL(relay.url).port);
}

/** Members with keys, told to the relay, each with a socket that did IP discovery. */
async function call(relay: ServerProcess): Promise<Member[]> {
  const members: Member[] = [];
  for (let i = 0; i < SPEAKERS + LISTENERS; i++) {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    members.push({ ssrc: 1000 + i, key: randomBytes(32), socket, counter: 0, sequence: 0 });
  }
  await relay.request({
    cmd: 'members',
    members: members.map((member) => ({ ssrc: member.ssrc, key: member.key.toString('hex') })),
  });
  const port = portOf(relay);
  await Promise.all(
    members.map(
      (member) =>
        new Promise<void>((resolve) => {
          const discovery = Buffer.alloc(74);
          discovery.writeUInt16BE(1, 0);
          discovery.writeUInt16BE(70, 2);
          discovery.writeUInt32BE(member.ssrc, 4);
          member.socket.once('message', () => resolve());
          member.socket.send(discovery, port, '127.0.0.1');
        }),
    ),
  );
  return members;
}

const nowUs = () => Math.round(performance.now() * 1000);

/** Speakers send at RATE for `ms`; every member counts what reaches it and when. */
async function round(members: Member[], port: number, ms: number): Promise<Round> {
  const tally: Tally = { received: 0, latenciesUs: [] };
  const listener = (packet: Buffer) => {
    tally.received += 1;
    // One delivery in eight is timed: enough samples for p99 without slowing the sink.
    if ((tally.received & 7) === 0) tally.latenciesUs.push((nowUs() - packet.readUInt32BE(4)) >>> 0);
  };
  for (const member of members) member.socket.on('message', listener);
  const speakers = members.slice(0, SPEAKERS);
  const perTick = RATE / 50;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (performance.now() - started >= ms) {
        clearInterval(timer);
        resolve();
        return;
      }
      for (let n = 0; n < perTick; n++) for (const speaker of speakers) send(speaker, port);
    }, 20);
  });
  const elapsed = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const member of members) member.socket.off('message', listener);
  const sorted = Float64Array.from(tally.latenciesUs).sort();
  return {
    packetsPerSecond: tally.received / (elapsed / 1000),
    p50Ms: percentile(sorted, 0.5) / 1000,
    p99Ms: percentile(sorted, 0.99) / 1000,
  };
}

function send(speaker: Member, port: number): void {
  speaker.sequence = (speaker.sequence + 1) & 0xffff;
  speaker.counter = (speaker.counter + 1) >>> 0;
  const header = Buffer.alloc(12);
  header[0] = 0x80;
  header[1] = 0x78;
  header.writeUInt16BE(speaker.sequence, 2);
  header.writeUInt32BE(nowUs() >>> 0, 4);
  header.writeUInt32BE(speaker.ssrc, 8);
  const iv = Buffer.alloc(12);
  iv.writeUInt32BE(speaker.counter, 0);
  const cipher = createCipheriv('aes-256-gcm', speaker.key, iv);
  cipher.setAAD(header);
  const body = cipher.update(Buffer.alloc(PAYLOAD_BYTES, 0x42));
  cipher.final();
  const packet = Buffer.concat([header, body, cipher.getAuthTag(), iv.subarray(0, 4)]);
  speaker.socket.send(packet, port, '127.0.0.1');
}

function figures(label: string, rounds: Round[]): Figures {
  return {
    label,
    throughput: median(rounds.map((r) => r.packetsPerSecond)),
    latencyP50Ms: median(rounds.map((r) => r.p50Ms)),
    latencyP99Ms: median(rounds.map((r) => r.p99Ms)),
    rounds: rounds.map((r) => r.packetsPerSecond),
  };
}
