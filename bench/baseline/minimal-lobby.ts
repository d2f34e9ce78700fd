// The minimal-work baseline of lobby-chat (issue 20): one Fastify 5 server and a `ws` WebSocketServer (Hearth's
// options) on one port, doing only what no implementation of lobby chat can skip, on SQLite with Hearth's
// settings (WAL, synchronous NORMAL, statements prepared once):
//   gateway /gateway    op 10 Hello; op 2 Identify authenticated by the token's SHA-256 in one indexed lookup,
//                       answered with a READY dispatch; op 1 answered with op 11. Each session counts its
//                       dispatches: every frame carries its own `s`, as a resumable gateway's must.
//   POST /api/v10/lobbies/:id/messages
//                       Bearer token hashed and read with its user (one indexed lookup), the author's
//                       membership checked (in memory), the JSON body parsed, the message row inserted in a
//                       transaction, the message object serialized once and sent to every member session in a
//                       frame with that session's `s`, and answered (201) with the same bytes.
//   --commit group      (default) the messages of the requests read in one turn of the event loop are stored
//                       in one transaction and written to each socket together, as Hearth's group commit and
//                       corked writes do; `--commit each`: a transaction and a write per message and session.
// Prints `minimal-lobby listening on <url>`, then answers over IPC (lib/ipc.ts):
//   {cmd: 'setup', lobbyId, applicationId, tokens, users}
//                       stores each player's user row and the hash of its token (tokens[i] is users[i]'s),
//                       and makes them all members of lobby `lobbyId` of application `applicationId`
//   {cmd: 'cpu'}        process.cpuUsage() and the time it was read (performance.now())
import { createHash, randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { parseArgs } from 'node:util';
import {
  GatewayCloseCodes,
  GatewayOpcodes,
  MessageTypes,
  SNOWFLAKE_EPOCH,
  SocialMessageFlags,
} from '@hearth/protocol';
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { answerRequests, type IpcRequest, sampleCpu } from '../lib/ipc.js';

const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    'heartbeat-ms': { type: 'string', default: '41250' },
    commit: { type: 'string', default: 'group' },
  },
});
const { database, commit } = values;
if (!database || (commit !== 'group' && commit !== 'each')) {
  throw new Error('usage: minimal-lobby.ts --database PATH [--commit group|each] [--heartbeat-ms MS]');
}
const heartbeatMs = Number(values['heartbeat-ms']);

const db = new SQLite(database);
db.pragma('busy_timeout = 15000');
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`
  CREATE TABLE IF NOT EXISTS tokens (token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL,
    application_id TEXT NOT NULL, expires_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS lobby_messages (id TEXT PRIMARY KEY, lobby_id TEXT NOT NULL,
    author_id TEXT NOT NULL, application_id TEXT NOT NULL, content TEXT NOT NULL, metadata TEXT,
    flags INTEGER NOT NULL, created_at INTEGER NOT NULL);
  CREATE INDEX IF NOT EXISTS lobby_messages_lobby ON lobby_messages (lobby_id, created_at);
`);
const insertMessage = db.prepare('INSERT INTO lobby_messages VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
const storeMessages = db.transaction((messages: readonly MessageRow[]) => {
  for (const message of messages) {
    insertMessage.run(
      message.id,
      message.lobbyId,
      message.authorId,
      message.applicationId,
      message.content,
      message.metadata,
      message.flags,
      message.createdAt,
    );
  }
});

interface MessageRow {
  id: string;
  lobbyId: string;
  authorId: string;
  applicationId: string;
  content: string;
  metadata: string | null;
  flags: number;
  createdAt: number;
}

/** A player as the token lookup answers it: the user object's fields, and the application of the token. */
type Principal = Record<string, unknown> & { id: string; application_id: string };

/** Set by `setup`: the token lookup (its columns are the user object's fields) and the lobby in memory. */
let findPrincipal: ((tokenHash: string) => Principal | undefined) | undefined;
const lobbies = new Map<string, { applicationId: string; members: Set<string> }>();

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Snowflakes of this process: the time since the protocol's epoch, then an increment (no worker bits). */
let lastId = 0n;
function snowflake(now: number): string {
  const id = BigInt(now - SNOWFLAKE_EPOCH) << 22n;
  lastId = id > lastId ? id : lastId + 1n;
  return lastId.toString();
}

/** One identified gateway connection: its player and the number of its last dispatch. */
interface Session {
  socket: WebSocket;
  /** The TCP socket under it, corked while a group of messages is written. */
  transport: Duplex;
  userId: string | undefined;
  seq: number;
}
const sessionsByUser = new Map<string, Set<Session>>();

function dispatch(session: Session, type: string, data: string): void {
  session.seq++;
  session.socket.send(`{"op":0,"d":${data},"s":${session.seq},"t":"${type}"}`);
}

const app = Fastify();
const wss = new WebSocketServer({
  server: app.server,
  path: '/gateway',
  maxPayload: 64 * 1024,
  perMessageDeflate: false,
});
const HELLO = JSON.stringify({
  op: GatewayOpcodes.Hello,
  d: { heartbeat_interval: heartbeatMs },
  s: null,
  t: null,
});
const HEARTBEAT_ACK = JSON.stringify({ op: GatewayOpcodes.HeartbeatAck, d: null, s: null, t: null });

wss.on('connection', (socket, request) => {
  const session: Session = { socket, transport: request.socket, userId: undefined, seq: 0 };
  socket.on('error', () => undefined);
  socket.on('message', (data) => receive(session, data));
  socket.on('close', () => {
    if (session.userId !== undefined) sessionsByUser.get(session.userId)?.delete(session);
  });
  socket.send(HELLO);
});

/** The gateway's one dispatch table: every frame parsed whole, an unknown or malformed one closes. */
function receive(session: Session, data: RawData): void {
  let frame: { op?: unknown; d?: unknown };
  try {
    frame = JSON.parse(String(data)) as { op?: unknown; d?: unknown };
  } catch {
    session.socket.close(GatewayCloseCodes.DecodeError, 'Error while decoding payload');
    return;
  }
  switch (frame.op) {
    case GatewayOpcodes.Heartbeat:
      session.socket.send(HEARTBEAT_ACK);
      return;
    case GatewayOpcodes.Identify:
      identify(session, frame.d);
      return;
    default:
      session.socket.close(GatewayCloseCodes.UnknownOpcode, 'Unknown opcode');
  }
}

function identify(session: Session, data: unknown): void {
  if (session.userId !== undefined) {
    session.socket.close(GatewayCloseCodes.AlreadyAuthenticated, 'Already authenticated');
    return;
  }
  const token = (data as { token?: unknown } | null)?.token;
  const principal =
    typeof token === 'string' && token.startsWith('Bearer ')
      ? findPrincipal?.(sha256(token.slice(7)))
      : undefined;
  if (!principal) {
    session.socket.close(GatewayCloseCodes.AuthenticationFailed, 'Authentication failed');
    return;
  }
  session.userId = principal.id;
  const sessions = sessionsByUser.get(principal.id) ?? new Set<Session>();
  sessionsByUser.set(principal.id, sessions.add(session));
  const { application_id: _, ...user } = principal;
  dispatch(session, 'READY', JSON.stringify({ v: 10, user, session_id: randomUUID() }));
}

app.post<{ Params: { id: string } }>('/api/v10/lobbies/:id/messages', async (request, reply) => {
  const header = request.headers.authorization;
  const author = header?.startsWith('Bearer ') ? findPrincipal?.(sha256(header.slice(7))) : undefined;
  if (!author) return reply.code(401).send({ message: '401: Unauthorized', code: 0 });
  const lobby = lobbies.get(request.params.id);
  if (!lobby || lobby.applicationId !== author.application_id || !lobby.members.has(author.id)) {
    return reply.code(404).send({ message: 'Unknown Lobby', code: 10031 });
  }
  const body = request.body as { content?: unknown; metadata?: unknown } | undefined;
  const metadata = body?.metadata;
  if (
    typeof body?.content !== 'string' ||
    body.content.length === 0 ||
    body.content.length > 4000 ||
    (metadata !== undefined && !isStringMap(metadata))
  ) {
    return reply.code(400).send({ message: 'Invalid Form Body', code: 50035 });
  }
  const now = Date.now();
  const row: MessageRow = {
    id: snowflake(now),
    lobbyId: request.params.id,
    authorId: author.id,
    applicationId: author.application_id,
    content: body.content,
    metadata: metadata && Object.keys(metadata).length > 0 ? JSON.stringify(metadata) : null,
    flags: SocialMessageFlags.SentBySocialLayerIntegration,
    createdAt: now,
  };
  const { application_id: _, ...user } = author;
  // Hearth's message object, field for field (domains/lobbies/objects.ts toMessageObject).
  const message = JSON.stringify({
    id: row.id,
    type: MessageTypes.Default,
    content: row.content,
    lobby_id: row.lobbyId,
    channel_id: row.lobbyId,
    author: user,
    ...(row.metadata !== null ? { metadata } : {}),
    flags: row.flags,
    application_id: row.applicationId,
    timestamp: new Date(now).toISOString(),
    edited_timestamp: null,
  });
  await (commit === 'group'
    ? groupCommit(row, message, lobby.members)
    : publish([{ row, message, members: lobby.members }]));
  return reply.code(201).type('application/json; charset=utf-8').send(message);
});

/** A message to store and deliver: its row, its serialized object, and the lobby's members. */
interface Posted {
  row: MessageRow;
  message: string;
  members: ReadonlySet<string>;
}

/**
 * Stores the messages in one transaction, then sends each member session its frames, each with its own `s`.
 * As Hearth's gateway does, a socket's first frame of the group is written at once and the rest in one
 * write (its TCP socket corked until the group is out), not a system call each. Events go out before the
 * requests are answered.
 */
function publish(posted: readonly Posted[]): void {
  storeMessages(posted.map((p) => p.row));
  const written = new Set<Session>();
  const corked: Duplex[] = [];
  for (const { message, members } of posted) {
    for (const member of members) {
      for (const session of sessionsByUser.get(member) ?? []) {
        if (!written.has(session)) written.add(session);
        else if (session.transport.writableCorked === 0) {
          session.transport.cork();
          corked.push(session.transport);
        }
        dispatch(session, 'LOBBY_MESSAGE_CREATE', message);
      }
    }
  }
  for (const transport of corked) if (transport.writableCorked > 0) transport.uncork();
}

/** The messages of the requests read in one turn of the event loop, stored and delivered together. */
let group: { posted: Posted[]; settle: Array<(error?: unknown) => void> } | undefined;

function groupCommit(row: MessageRow, message: string, members: ReadonlySet<string>): Promise<void> {
  if (!group) {
    const gathering = { posted: [] as Posted[], settle: [] as Array<(error?: unknown) => void> };
    group = gathering;
    setImmediate(() => {
      group = undefined;
      try {
        publish(gathering.posted);
        for (const settle of gathering.settle) settle();
      } catch (error) {
        for (const settle of gathering.settle) settle(error);
      }
    });
  }
  const gathering = group;
  gathering.posted.push({ row, message, members });
  return new Promise((resolve, reject) => {
    gathering.settle.push((error) => (error === undefined ? resolve() : reject(error)));
  });
}

function isStringMap(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((entry) => typeof entry === 'string')
  );
}

/**
 * The players' user objects become the rows of a users table whose columns are their fields (objects as
 * JSON text, booleans as 0/1), so the token lookup reads the user field by field as a server must.
 */
function setup(request: IpcRequest): unknown {
  const { lobbyId, applicationId, tokens, users } = request;
  if (
    typeof lobbyId !== 'string' ||
    typeof applicationId !== 'string' ||
    !Array.isArray(tokens) ||
    !Array.isArray(users) ||
    tokens.length !== users.length ||
    users.length === 0
  ) {
    throw new Error('setup needs a lobbyId, an applicationId, and as many tokens as users');
  }
  const shape = users[0] as Record<string, unknown>;
  const fields = Object.keys(shape);
  const objects = fields.filter((field) => shape[field] !== null && typeof shape[field] === 'object');
  const booleans = fields.filter((field) => typeof shape[field] === 'boolean');
  db.exec(`CREATE TABLE IF NOT EXISTS users (${fields.map((f) => `"${f}"`).join(', ')});
    CREATE UNIQUE INDEX IF NOT EXISTS users_id ON users (id);`);
  const addUser = db.prepare(
    `INSERT OR REPLACE INTO users (${fields.map((f) => `"${f}"`).join(', ')}) VALUES (${fields.map(() => '?').join(', ')})`,
  );
  const addToken = db.prepare('INSERT OR REPLACE INTO tokens VALUES (?, ?, ?, ?)');
  const members = new Set<string>();
  db.transaction(() => {
    users.forEach((value, i) => {
      const user = value as Record<string, unknown>;
      addUser.run(
        ...fields.map((field) => {
          const entry = user[field];
          if (typeof entry === 'boolean') return entry ? 1 : 0;
          return entry !== null && typeof entry === 'object' ? JSON.stringify(entry) : (entry ?? null);
        }),
      );
      addToken.run(sha256(String(tokens[i])), user['id'], applicationId, Date.now() + 604_800_000);
      members.add(String(user['id']));
    });
  })();
  const find = db.prepare<[string, number], Principal>(
    `SELECT ${fields.map((f) => `u."${f}"`).join(', ')}, t.application_id FROM tokens t
     JOIN users u ON u.id = t.user_id WHERE t.token_hash = ? AND t.expires_at > ?`,
  );
  findPrincipal = (tokenHash) => {
    const row = find.get(tokenHash, Date.now());
    if (!row) return undefined;
    for (const field of objects) if (typeof row[field] === 'string') row[field] = JSON.parse(row[field]);
    for (const field of booleans) row[field] = row[field] === 1;
    return row;
  };
  lobbies.set(lobbyId, { applicationId, members });
  return { members: members.size };
}

answerRequests(async (request) => {
  switch (request.cmd) {
    case 'setup':
      return setup(request);
    case 'cpu':
      return sampleCpu();
    default:
      throw new Error(`unknown command ${request.cmd}`);
  }
});

await app.listen({ host: values.host, port: 0 });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
process.stdout.write(`minimal-lobby listening on http://${values.host}:${port}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const client of wss.clients) client.terminate();
    wss.close();
    app.close().then(
      () => {
        db.close();
        process.exit(0);
      },
      () => process.exit(1),
    );
  });
}
