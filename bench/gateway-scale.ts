import { join } from 'node:path';
import { HEARTBEAT_INTERVAL_MS } from '@hearth/protocol';
import type { Benchmark, Figures, Result } from './benchmark.js';
import type { ServerProcess } from './lib/children.js';
import {
  Fleet,
  gatewayUrl,
  openFileLimit,
  playerTokens,
  startBareWs,
  startHearthGateway,
} from './lib/gateway.js';
import { type CpuSample, isCpuSample, isMemorySample, type MemorySample } from './lib/ipc.js';
import { progress } from './lib/progress.js';
import { scratchDir } from './lib/scratch.js';

/** Issue 20: one node's sessions at scale. Fewer when the open-file limit cannot hold them (noted). */
const FULL_SESSIONS = 10_000;
const WARMUP_SESSIONS = 20;
const SPARE_FDS = 256;
const CONNECT = { concurrency: 100, timeoutMs: 180_000 };
const GIB = 1024 ** 3;

interface Measured {
  heap: number;
  rss: number;
  /** CPU over one heartbeat interval, as a share of one core (%). */
  cpu: number;
}

/**
 * 10,000 idle identified sessions on one Hearth node, beside as many plain connections to bare `ws`: heap
 * and RSS per session, then the CPU both spend over one whole heartbeat interval at the protocol's default
 * (41.25 s) while every client beats once in it, as real clients do (first beat at a random point).
 */
const gatewayScale: Benchmark = {
  name: 'gateway-scale',
  description: '10,000 idle sessions on one node: memory per session, CPU of their heartbeats',
  timeoutSeconds: 600,
  async run(): Promise<Result[]> {
    const limit = openFileLimit();
    // Each side runs alone: the bench process holds one side's clients, the server child the other end.
    const sessions = Math.min(FULL_SESSIONS, Math.floor((limit - SPARE_FDS - WARMUP_SESSIONS) / 1000) * 1000);
    if (sessions < 1000)
      throw new Error(`open-file limit ${limit} (ulimit -n) is too low for 1,000 sessions`);
    const dir = scratchDir('hearth-bench-');
    const servers = new Set<ServerProcess>();
    const started = async (start: Promise<ServerProcess>) => {
      const server = await start;
      servers.add(server);
      return server;
    };
    try {
      const database = `sqlite:${join(dir.path, 'gateway.sqlite')}`;
      progress(`  minting ${sessions + WARMUP_SESSIONS} players with tokens`);
      const minter = await started(
        startHearthGateway({ players: sessions + WARMUP_SESSIONS, database, exposeGc: false }),
      );
      const tokens = await playerTokens(minter);
      await minter.stop();
      servers.delete(minter);

      const hearthServer = await started(
        startHearthGateway({ database, exposeGc: true, heartbeatMs: HEARTBEAT_INTERVAL_MS }),
      );
      const url = gatewayUrl(hearthServer.url);
      const hearth = await measure(
        'Hearth',
        hearthServer,
        () => Fleet.open({ label: 'Hearth', url, tokens: tokens.slice(sessions), ...CONNECT }),
        () =>
          Fleet.open({
            label: 'Hearth',
            url,
            tokens: tokens.slice(0, sessions),
            heartbeatMs: HEARTBEAT_INTERVAL_MS,
            ...CONNECT,
          }),
        sessions,
      );
      await hearthServer.stop();
      servers.delete(hearthServer);
      if (hearth.ack === undefined) throw new Error('Hearth sent no heartbeat ack');

      const bareServer = await started(startBareWs({ exposeGc: true, ack: hearth.ack }));
      const bareUrl = gatewayUrl(bareServer.url);
      const bare = await measure(
        'bare ws',
        bareServer,
        () => Fleet.open({ label: 'bare ws', url: bareUrl, count: WARMUP_SESSIONS, ...CONNECT }),
        () =>
          Fleet.open({
            label: 'bare ws',
            url: bareUrl,
            count: sessions,
            heartbeatMs: HEARTBEAT_INTERVAL_MS,
            ...CONNECT,
          }),
        sessions,
      );

      const notes = [
        `${sessions.toLocaleString('en')} sessions per side, one side at a time (Hearth first: its ` +
          `heartbeat ack is the frame bare ws answers with); Hearth: each identified as a different player ` +
          `(Bearer token, intents 0), heartbeat interval ${HEARTBEAT_INTERVAL_MS} ms (the default); bare ` +
          `ws: plain connections whose op 1 frames it parses and acks`,
        `memory: process.memoryUsage() after forced GC before and after the sessions connect (after ` +
          `${WARMUP_SESSIONS} warm-up connections), delta / sessions; one round per side`,
        `cpu: process.cpuUsage() over one heartbeat interval, in which every client beats once (each beats ` +
          `from the moment it is open, the first time at a random point of the interval), as % of one core`,
        `projected on one node: ${perGiB(hearth.heap)} sessions per GiB of V8 heap, ` +
          `${perGiB(hearth.rss)} per GiB of RSS (bare ws: ${perGiB(bare.heap)} and ${perGiB(bare.rss)})`,
      ];
      return [
        result('heap', 'B/session', bare.heap, hearth.heap, notes),
        result('rss', 'B/session', bare.rss, hearth.rss, []),
        result('heartbeat cpu', '% of a core', bare.cpu, hearth.cpu, []),
      ];
    } finally {
      await Promise.allSettled([...servers].map((server) => server.stop()));
      dir.remove();
    }
  },
};

export default gatewayScale;

async function measure(
  label: string,
  server: ServerProcess,
  warmUp: () => Promise<Fleet>,
  open: () => Promise<Fleet>,
  sessions: number,
): Promise<Measured & { ack: string | undefined }> {
  const warm = await warmUp();
  await warm.close(5_000);
  const before = await memory(server, 0);
  const started = performance.now();
  const fleet = await open();
  try {
    progress(
      `  ${label}: ${sessions} sessions ready in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const after = await memory(server, sessions);
    const heap = (after.heapUsed - before.heapUsed) / sessions;
    const rss = (after.rss - before.rss) / sessions;
    // Every client beats once in any whole interval, having beaten since it opened.
    fleet.takeAcks();
    const cpuBefore = await cpu(server);
    await sleep(HEARTBEAT_INTERVAL_MS);
    const cpuAfter = await cpu(server);
    // The acks of beats sent at the window's end are on their way.
    await sleep(2_000);
    const { acks, sample } = fleet.takeAcks();
    if (fleet.failure) throw fleet.failure;
    const missing = acks.filter((count) => count === 0).length;
    if (missing > 0) throw new Error(`${label}: ${missing} of ${sessions} clients got no heartbeat ack`);
    const usedUs = cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system;
    const share = (100 * usedUs) / ((cpuAfter.at - cpuBefore.at) * 1000);
    progress(
      `  ${label}: heap ${Math.round(heap)} B/session, rss ${Math.round(rss)} B/session, heartbeats ` +
        `${share.toFixed(2)} % of a core`,
    );
    return { heap, rss, cpu: share, ack: sample };
  } finally {
    await fleet.close(10_000);
  }
}

/** A memory sample once the server holds `held` sessions (closes are asynchronous); at most 10 s. */
async function memory(server: ServerProcess, held: number): Promise<MemorySample> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    server.assertAlive();
    const sample = await server.request({ cmd: 'memory' }, 60_000);
    if (!isMemorySample(sample)) throw new Error(`${server.name} answered no memory sample`);
    if (sample.held === held) return sample;
    if (performance.now() > deadline) {
      throw new Error(`${server.name} holds ${sample.held} sessions, expected ${held}`);
    }
    await sleep(100);
  }
}

async function cpu(server: ServerProcess): Promise<CpuSample> {
  const sample = await server.request({ cmd: 'cpu' });
  if (!isCpuSample(sample)) throw new Error(`${server.name} answered no CPU sample`);
  return sample;
}

function result(metric: string, unit: string, baseline: number, hearth: number, notes: string[]): Result {
  const figures = (label: string, value: number): Figures => ({ label, throughput: value, rounds: [value] });
  return {
    metric,
    unit,
    baseline: figures('bare ws 8', baseline),
    hearth: figures('Hearth', hearth),
    ratio: hearth / baseline,
    lowerIsBetter: true,
    notes,
  };
}

function perGiB(bytesPerSession: number): string {
  return Math.floor(GIB / bytesPerSession).toLocaleString('en');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
