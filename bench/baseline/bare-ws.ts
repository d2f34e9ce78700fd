// The gateway baseline: a bare `ws` WebSocketServer (the library Hearth's gateway is built on, with the
// options Hearth gives it) that accepts every connection on any path and does nothing else: no Hello, no
// Identify, no sessions. Prints `bare-ws listening on <url>`, then answers over IPC (lib/ipc.ts):
//   {cmd: 'publish', count, payload}  → sends `payload` (a text frame) `count` times to every client
//   {cmd: 'memory'}                   → a MemorySample after forced GC (needs --expose-gc); held = clients
//   {cmd: 'cpu'}                      → process.cpuUsage() and the time it was read (performance.now())
// With `--ack <frame>` every client's op 1 Heartbeat is answered with that text frame (Hearth's own ack).
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { WebSocketServer } from 'ws';
import { answerRequests, sampleCpu, sampleMemory } from '../lib/ipc.js';

const { values } = parseArgs({
  options: { host: { type: 'string', default: '127.0.0.1' }, ack: { type: 'string' } },
});
const ack = values.ack;

const server = createServer((_request, response) => {
  response.writeHead(404).end();
});
const wss = new WebSocketServer({ server, maxPayload: 64 * 1024, perMessageDeflate: false });
wss.on('connection', (socket) => {
  socket.on('error', () => undefined);
  // Parsed whole, as Hearth parses every frame it receives.
  if (ack !== undefined) {
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as { op?: unknown };
      if (frame.op === 1) socket.send(ack);
    });
  }
});

answerRequests(async (request) => {
  switch (request.cmd) {
    case 'publish': {
      const count = Number(request['count']);
      const payload = request['payload'];
      if (!Number.isInteger(count) || count < 1 || typeof payload !== 'string') {
        throw new Error('publish needs a count and a payload string');
      }
      for (let i = 0; i < count; i++) {
        for (const client of wss.clients) client.send(payload);
      }
      return { published: count, clients: wss.clients.size };
    }
    case 'memory':
      return sampleMemory(() => wss.clients.size);
    case 'cpu':
      return sampleCpu();
    default:
      throw new Error(`unknown command ${request.cmd}`);
  }
});

await new Promise<void>((resolve) => server.listen(0, values.host, resolve));
const address = server.address();
const port = typeof address === 'object' && address ? address.port : 0;
process.stdout.write(`bare-ws listening on http://${values.host}:${port}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const client of wss.clients) client.terminate();
    wss.close();
    server.close(() => process.exit(0));
  });
}
