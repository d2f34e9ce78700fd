// The minimal-work baseline of cross-node (issue 20): a node of a deployment on PostgreSQL and Redis doing only
// what no implementation can skip to carry an event from the node it is published on to a session on another,
// durably and in order, with the same clients and event bytes as Hearth's nodes:
//   gateway /gateway  op 10 Hello; op 2 Identify with a token given by `setup` (looked up in memory), answered
//                     with READY. Every dispatch carries its session's own `s`, as a resumable gateway's must.
//   publish           the events published while an append is under way go together in the next: one
//                     autocommit INSERT of the batch as arrays (one round trip, one commit), then a Redis
//                     PUBLISH that wakes the other nodes; the node sends its own rows to its own sessions at
//                     once, without reading them back.
//   read              on a wake-up, or every 100 ms, the rows after the last one delivered, 500 at a time,
//                     each parsed once for its player and sent to that player's sessions on this node.
// Appends and reads take turns on one chain, so a node delivers in row order. Skipped, which a deployment in
// the field could not skip but this bench never needs: the table lock that keeps the commits of several
// publishing nodes in row order (here one node publishes), trimming the log, and keeping dispatches for a
// session to resume on another node.
// Prints `minimal-cross-node listening on <url>`, then answers over IPC (lib/ipc.ts):
//   {cmd: 'setup', tokens}   the players: `tokens[i]` identifies player i (the node's sessions then Identify)
//   {cmd: 'stream', rate, count, run, from, to, data}
//                            as servers/hearth-gateway.ts: `count` events at `rate` per second, event i to
//                            player `from + i % (to - from)` alone, with the same pacing and the same reply
//   {cmd: 'cpu'}             process.cpuUsage() and the time it was read (performance.now())

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { GatewayCloseCodes, GatewayOpcodes } from '@hearth/protocol';
import { Redis } from 'ioredis';
import pg from 'pg';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { BENCH_EVENT_TYPE } from '../lib/gateway-event.js';
import { answerRequests, type IpcRequest, sampleCpu } from '../lib/ipc.js';
import { paceStream, streamEvent } from '../lib/pace.js';

const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    schema: { type: 'string' },
    redis: { type: 'string' },
    prefix: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});
const { database, schema, redis: redisUrl, prefix } = values;
if (!database || !schema || !/^[a-z0-9_]+$/.test(schema) || !redisUrl || prefix === undefined) {
  throw new Error(
    'usage: minimal-cross-node.ts --database <postgres url> --schema <name> --redis <url> --prefix <key prefix>',
  );
}
/** Rows one read returns at most, as Hearth's bus reads them. */
const BATCH = 500;
const POLL_MS = 100;

const pool = new pg.Pool({ connectionString: database, max: 4, options: `-c search_path=${schema}` });
await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
await pool.query(
  'CREATE TABLE IF NOT EXISTS log (id bigserial PRIMARY KEY, player integer NOT NULL, data text NOT NULL)',
);
const channel = `${prefix}minimal-wake`;
const publisher = new Redis(redisUrl);
const subscriber = new Redis(redisUrl);
await subscriber.subscribe(channel);

/** One identified gateway connection: its player and the number of its last dispatch. */
interface Session {
  socket: WebSocket;
  player: number | undefined;
  seq: number;
}
const sessionsByPlayer = new Map<number, Set<Session>>();
let identified = 0;
let players = new Map<string, number>();

function dispatch(session: Session, type: string, data: string): void {
  session.seq++;
  session.socket.send(`{"op":0,"d":${data},"s":${session.seq},"t":"${type}"}`);
}

const server = createServer((_, response) => response.writeHead(404).end());
const wss = new WebSocketServer({
  server,
  path: '/gateway',
  maxPayload: 64 * 1024,
  perMessageDeflate: false,
});
const HELLO = JSON.stringify({
  op: GatewayOpcodes.Hello,
  d: { heartbeat_interval: 600_000 },
  s: null,
  t: null,
});
const HEARTBEAT_ACK = JSON.stringify({ op: GatewayOpcodes.HeartbeatAck, d: null, s: null, t: null });

wss.on('connection', (socket) => {
  const session: Session = { socket, player: undefined, seq: 0 };
  socket.on('error', () => undefined);
  socket.on('message', (data) => receive(session, data));
  socket.on('close', () => {
    if (session.player === undefined) return;
    sessionsByPlayer.get(session.player)?.delete(session);
    identified--;
  });
  socket.send(HELLO);
});

function receive(session: Session, data: RawData): void {
  let frame: { op?: unknown; d?: unknown };
  try {
    frame = JSON.parse(String(data)) as { op?: unknown; d?: unknown };
  } catch {
    session.socket.close(GatewayCloseCodes.DecodeError, 'Error while decoding payload');
    return;
  }
  if (frame.op === GatewayOpcodes.Heartbeat) {
    session.socket.send(HEARTBEAT_ACK);
    return;
  }
  if (frame.op !== GatewayOpcodes.Identify || session.player !== undefined) {
    session.socket.close(GatewayCloseCodes.UnknownOpcode, 'Unknown opcode');
    return;
  }
  const token = (frame.d as { token?: unknown } | null)?.token;
  const player = typeof token === 'string' ? players.get(token.replace(/^Bearer /, '')) : undefined;
  if (player === undefined) {
    session.socket.close(GatewayCloseCodes.AuthenticationFailed, 'Authentication failed');
    return;
  }
  session.player = player;
  identified++;
  const sessions = sessionsByPlayer.get(player) ?? new Set<Session>();
  sessionsByPlayer.set(player, sessions.add(session));
  dispatch(
    session,
    'READY',
    JSON.stringify({ v: 10, user: { id: String(player) }, session_id: randomUUID() }),
  );
}

function deliver(player: number, data: string): void {
  for (const session of sessionsByPlayer.get(player) ?? []) dispatch(session, BENCH_EVENT_TYPE, data);
}

/** Appends and reads, one after another: rows reach this node's sessions in row order. */
let chain: Promise<unknown> = Promise.resolve();
function serially(task: () => Promise<void>): void {
  chain = chain.then(task).catch((error: unknown) => {
    process.stderr.write(`minimal-cross-node: ${String(error)}\n`);
  });
}

/** The last row delivered; before the first, the log's end at start. */
let last = Number(
  (await pool.query<{ id: string | null }>('SELECT max(id) AS id FROM log')).rows[0]?.id ?? 0,
);
let readQueued = false;

function wake(): void {
  if (readQueued) return;
  readQueued = true;
  serially(async () => {
    readQueued = false;
    for (;;) {
      const { rows } = await pool.query<{ id: string; player: number; data: string }>(
        'SELECT id, player, data FROM log WHERE id > $1 ORDER BY id LIMIT $2',
        [last, BATCH],
      );
      for (const row of rows) {
        last = Number(row.id);
        deliver(row.player, row.data);
      }
      if (rows.length < BATCH) return;
    }
  });
}
// A node's own wake-ups come back to it too: told apart by this tag, and ignored (its rows are sent already).
const self = randomUUID();
subscriber.on('message', (_channel: string, from: string) => {
  if (from !== self) wake();
});
setInterval(wake, POLL_MS).unref();

/** Publishes waiting for the next append, in call order. */
const queued: Array<{ player: number; data: string; settle: () => void; fail: (error: unknown) => void }> =
  [];

function publish(player: number, data: string): Promise<void> {
  return new Promise<void>((settle, fail) => {
    queued.push({ player, data, settle, fail });
    if (queued.length === 1) serially(append);
  });
}

async function append(): Promise<void> {
  const batch = queued.splice(0, BATCH);
  if (queued.length > 0) serially(append);
  try {
    const { rows } = await pool.query<{ id: string }>(
      'INSERT INTO log (player, data) SELECT * FROM unnest($1::integer[], $2::text[]) RETURNING id',
      [batch.map((event) => event.player), batch.map((event) => event.data)],
    );
    void publisher.publish(channel, self);
    const ids = rows.map((row) => Number(row.id)).sort((a, b) => a - b);
    if (ids[0] === last + 1 && ids.at(-1) === last + ids.length) {
      batch.forEach((event, i) => {
        last = ids[i]!;
        deliver(event.player, event.data);
      });
    } else {
      // Another node's rows came in between: read through them, in order.
      wake();
    }
  } catch (error) {
    for (const event of batch) event.fail(error);
    return;
  }
  for (const event of batch) event.settle();
}

async function stream(request: IpcRequest): Promise<unknown> {
  const { rate, count, from, to, run, data } = request;
  if (
    typeof rate !== 'number' ||
    typeof count !== 'number' ||
    typeof from !== 'number' ||
    typeof to !== 'number' ||
    typeof run !== 'string' ||
    typeof data !== 'object' ||
    data === null ||
    !(rate > 0 && Number.isInteger(count) && count > 0 && 0 <= from && from < to && to <= players.size)
  ) {
    throw new Error('stream needs a rate, a count, a run tag, players [from, to) of setup, and data');
  }
  const receivers = to - from;
  const paced = await paceStream(rate, count, (i, dueAt) =>
    publish(
      from + (i % receivers),
      JSON.stringify(streamEvent(data as Record<string, unknown>, run, i, dueAt)),
    ),
  );
  return { ...paced, published: count, sessions: identified };
}

answerRequests(async (request) => {
  switch (request.cmd) {
    case 'setup': {
      const { tokens } = request;
      if (!Array.isArray(tokens) || !tokens.every((token): token is string => typeof token === 'string')) {
        throw new Error('setup needs the players’ tokens');
      }
      players = new Map(tokens.map((token, i) => [token, i]));
      return { players: players.size };
    }
    case 'stream':
      return stream(request);
    case 'cpu':
      return sampleCpu();
    default:
      throw new Error(`unknown command ${String(request.cmd)}`);
  }
});

server.listen(0, values.host, () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  process.stdout.write(`minimal-cross-node listening on http://${values.host}:${address.port}\n`);
});
