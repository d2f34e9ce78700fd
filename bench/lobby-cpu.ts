// `tsx bench/lobby-cpu.ts [runs] [--root <checkout>] [--rate <per sender per second>]`: the Hearth gateway
// child's own CPU (user + system, process.cpuUsage) per message over lobby-chat's closed-loop runs (100
// members, 10 senders), or at an offered rate with `--rate`: a figure that a neighbour on a shared machine
// disturbs far less than throughput. `--root` runs the server of another checkout (an older version, for
// alternating). Not part of `npm run bench`.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { lobbyMessagesChat } from './lib/chat.js';
import { startServer } from './lib/children.js';
import { Fleet, gatewayUrl, HEARTBEAT_MS, playerTokens } from './lib/gateway.js';
import { profileFlags } from './lib/hearth.js';
import { JsonClient } from './lib/http.js';
import { isCpuSample } from './lib/ipc.js';
import { scratchDir } from './lib/scratch.js';

const MEMBERS = 100;
const SENDERS = 10;
const SEND_SECONDS = 3;
const SECRET = 'hearth-bench-lobby';
const CONTENT = 'gg! same lobby tomorrow at nine? I can host again, bring the new map';

const { values, positionals } = parseArgs({
  options: {
    root: { type: 'string', default: join(import.meta.dirname, '..') },
    rate: { type: 'string' },
  },
  allowPositionals: true,
});
const runs = Number(positionals[0] ?? 5);
const dir = scratchDir('hearth-bench-');
const hearth = await startServer({
  name: 'hearth-gateway',
  args: [
    '--import',
    'tsx',
    join(values.root, 'bench/servers/hearth-gateway.ts'),
    '--host',
    '127.0.0.1',
    '--players',
    String(MEMBERS),
    '--database',
    `sqlite:${join(dir.path, 'lobby.sqlite')}`,
    '--approve',
    'CommunicationFeaturesApproved',
    '--rate-limit-global',
    '1000000000',
    '--heartbeat-ms',
    String(HEARTBEAT_MS),
  ],
  nodeFlags: profileFlags(),
  ipc: true,
  cwd: values.root,
  ready: /^hearth-gateway listening on (http:\/\/\S+)$/,
  timeoutMs: 120_000,
});
const http = new JsonClient(hearth.url, SENDERS);
try {
  const tokens = await playerTokens(hearth);
  let lobbyId = '';
  for (const token of tokens) {
    const reply = await http.send('PUT', '/api/v10/lobbies', `Bearer ${token}`, { secret: SECRET });
    lobbyId = (JSON.parse(reply.body) as { id: string }).id;
  }
  const path = `/api/v10/lobbies/${lobbyId}/messages`;
  const chat = lobbyMessagesChat({
    http,
    path,
    content: CONTENT,
    members: MEMBERS,
    sendSeconds: SEND_SECONDS,
    drainTimeoutMs: 30_000,
  });
  const fleet = await Fleet.open({
    label: 'Hearth',
    url: gatewayUrl(hearth.url),
    tokens,
    onEvent: (client, data, at) => chat.delivered(client, data, at),
    concurrency: 25,
    timeoutMs: 30_000,
  });
  const cpu = async () => {
    const sample = await hearth.request({ cmd: 'cpu' });
    if (!isCpuSample(sample)) throw new Error('no cpu sample');
    return sample.user + sample.system;
  };
  const senders = tokens.slice(0, SENDERS);
  const pace = values.rate === undefined ? undefined : { perSenderPerSecond: Number(values.rate) };
  await chat.run(fleet, senders, pace);
  const perMessage: number[] = [];
  const messages: number[] = [];
  for (let i = 0; i < runs; i++) {
    const before = await cpu();
    const run = await chat.run(fleet, senders, pace);
    perMessage.push(((await cpu()) - before) / run.messages);
    messages.push(run.messages);
  }
  messages.sort((a, b) => a - b);
  const sorted = perMessage.sort((a, b) => a - b);
  console.log(
    `Hearth (${values.root}) server CPU per message: median ${(sorted[Math.floor(sorted.length / 2)]! / 1000).toFixed(2)} ms, ` +
      `min ${(sorted[0]! / 1000).toFixed(2)}, max ${(sorted.at(-1)! / 1000).toFixed(2)} (${runs} ` +
      `${pace ? `runs at ${SENDERS * pace.perSenderPerSecond} messages/s offered` : 'closed-loop runs'}, ` +
      `median ${messages[Math.floor(messages.length / 2)]} messages a run)`,
  );
  await fleet.close(5_000);
} finally {
  http.close();
  await hearth.stop(process.env['BENCH_PROFILE'] ? 60_000 : 5_000);
  dir.remove();
}
