// `tsx bench/fanout-cpu.ts [bursts] [--bare]`: the Hearth gateway child's own CPU (user + system, process.cpuUsage)
// per delivery over gateway-fanout's bursts: a figure that a neighbour on a shared machine disturbs far
// less than throughput. Not part of `npm run bench`; for comparing two versions of the server, alternating.

import {
  Fleet,
  gatewayUrl,
  playerTokens,
  publishTo,
  startBareWs,
  startHearthGateway,
} from './lib/gateway.js';
import { BENCH_EVENT_DATA } from './lib/gateway-event.js';
import { isCpuSample } from './lib/ipc.js';

const SESSIONS = 1000;
const EVENTS = 50;
const bursts = Number(process.argv[2] ?? 10);

const hearth = await startHearthGateway({ players: SESSIONS, exposeGc: false });
try {
  const tokens = await playerTokens(hearth);
  const fleet = await Fleet.open({
    label: 'Hearth',
    url: gatewayUrl(hearth.url),
    tokens,
    concurrency: 50,
    timeoutMs: 30_000,
  });
  const publish = () =>
    publishTo(hearth, { cmd: 'publish', count: EVENTS, data: BENCH_EVENT_DATA }, SESSIONS, 20_000);
  const cpu = async () => {
    const cpuSample = await measured.request({ cmd: 'cpu' });
    if (!isCpuSample(cpuSample)) throw new Error('no cpu sample');
    return cpuSample.user + cpuSample.system;
  };
  await fleet.burst(EVENTS, publish, 20_000);
  await fleet.burst(EVENTS, publish, 20_000);
  const sample = fleet.sample;
  const bare = process.argv.includes('--bare') ? await startBareWs({ exposeGc: false }) : undefined;
  const measured = bare ?? hearth;
  const measuredFleet = bare
    ? await Fleet.open({
        label: 'bare ws',
        url: gatewayUrl(bare.url),
        count: SESSIONS,
        concurrency: 50,
        timeoutMs: 30_000,
      })
    : fleet;
  const send = bare
    ? () => publishTo(bare, { cmd: 'publish', count: EVENTS, payload: sample }, SESSIONS, 20_000)
    : publish;
  if (bare) await measuredFleet.burst(EVENTS, send, 20_000);
  const perDelivery: number[] = [];
  for (let i = 0; i < bursts; i++) {
    const before = await cpu();
    await measuredFleet.burst(EVENTS, send, 20_000);
    perDelivery.push((await cpu()) - before);
  }
  const sorted = perDelivery.map((us) => us / (SESSIONS * EVENTS)).sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  console.log(
    `${bare ? 'bare ws' : 'Hearth'} server CPU per delivery: median ${median.toFixed(2)} µs, min ${sorted[0]!.toFixed(2)}, ` +
      `max ${sorted.at(-1)!.toFixed(2)} (${bursts} bursts of ${EVENTS} events to ${SESSIONS} sessions)`,
  );
  await fleet.close(5_000);
  if (bare) {
    await measuredFleet.close(5_000);
    await bare.stop();
  }
} finally {
  await hearth.stop();
}
