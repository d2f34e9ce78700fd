// Hearth for the gateway benchmarks, in its own process: createHearth on `--database` (default in-memory
// SQLite), loopback only. With `--players N` it first creates a game and N players, each holding an access
// token for that game granted `openid sdk.social_layer` (which carries gateway.connect), so that every client
// identifies as a different player and no identify budget (max_concurrency per 5 s, 1000 a day, per user) is
// reached; without it, it serves the game and players an earlier run left in the database. `--approve <flag>`
// grants the game an approval flag (as `hearth apps update --approve` does), and `--rate-limit-global <n>` sets
// the per-identity request budget (as `hearth serve --rate-limit-global` does), for the HTTP benchmarks.
// `--redis <url>` with `--redis-prefix` and `--worker-id` make it a node of a many-node deployment (as `hearth
// serve --redis` does), on a PostgreSQL `--database` the other nodes share (cross-node).
// Prints `hearth-gateway listening on <url>` once ready, then answers over IPC (lib/ipc.ts):
//   {cmd: 'players'}                → the access tokens minted by this process, in order
//   {cmd: 'publish', count, data}   → publishes `count` events of BENCH_EVENT_TYPE to the game's sessions
//   {cmd: 'stream', rate, count, run, from, to, data}
//                                   → publishes `count` events of BENCH_EVENT_TYPE at `rate` per second, event
//                                     i to player `from + i % (to - from)` alone (see `stream` below)
//   {cmd: 'memory'}                 → a MemorySample after forced GC (needs --expose-gc); held = sessions
//   {cmd: 'heap-snapshot', path}    → writes a V8 heap snapshot to `path`
//   {cmd: 'cpu'}                    → process.cpuUsage() and the time it was read (performance.now())
//   {cmd: 'befriend'}               → makes the first player a friend of every other (presence fan-out)
//   {cmd: 'presence', round}        → one presence change of the first player, through the presence service
//   {cmd: 'users'}                  → each minted player's user object as GET /users/:id answers it, in order
//   {cmd: 'guild'}                  → a guild of every player (the first owns it) with a text channel, and a
//                                     user session token per player, in order: {guildId, channelId, sessions}
import { parseArgs } from 'node:util';
import { writeHeapSnapshot } from 'node:v8';
import { createHearth, testConfig } from '@hearth/server';
import { BENCH_EVENT_TYPE } from '../lib/gateway-event.js';
import { answerRequests, sampleCpu, sampleMemory } from '../lib/ipc.js';
import { paceStream, streamEvent } from '../lib/pace.js';

const REDIRECT_URI = 'http://127.0.0.1/callback';
const SCOPE = 'openid sdk.social_layer';
const GAME = 'Bench Game';

const { values } = parseArgs({
  options: {
    players: { type: 'string' },
    database: { type: 'string', default: 'sqlite::memory:' },
    host: { type: 'string', default: '127.0.0.1' },
    'heartbeat-ms': { type: 'string' },
    approve: { type: 'string' },
    'rate-limit-global': { type: 'string' },
    redis: { type: 'string' },
    'redis-prefix': { type: 'string' },
    'worker-id': { type: 'string' },
  },
});
const players = values.players === undefined ? 0 : Number(values.players);
if (!Number.isInteger(players) || players < 0) {
  throw new Error(
    'usage: hearth-gateway.ts [--players <n>] [--database <url>] [--heartbeat-ms <ms>] [--approve <flag>] ' +
      '[--rate-limit-global <n>] [--redis <url> --redis-prefix <prefix> --worker-id <n>]',
  );
}

const hearth = await createHearth({
  config: testConfig({
    databaseUrl: values.database,
    host: values.host,
    port: 0,
    logLevel: 'warn',
    // Every client of the bench comes from 127.0.0.1; in the field each player has an address of their own.
    gatewayMaxConnectionsPerAddress: 1_000_000,
    ...(values['rate-limit-global'] ? { rateLimitGlobal: Number(values['rate-limit-global']) } : {}),
    ...(values.redis ? { redisUrl: values.redis, redisPrefix: values['redis-prefix'] ?? '' } : {}),
    // Snowflakes of two nodes must not collide (as each `hearth serve` of a deployment is configured).
    ...(values['worker-id'] ? { workerId: Number(values['worker-id']) } : {}),
  }),
  // Idle sessions need no heartbeats during the run (the deadline timer exists either way).
  ...(values['heartbeat-ms'] ? { gateway: { heartbeatIntervalMs: Number(values['heartbeat-ms']) } } : {}),
});
const { accounts, applications, oauth2 } = hearth.services;

const minted = players > 0 ? await mint(players) : undefined;
const clientId =
  minted?.clientId ??
  (
    await hearth.storage.db
      .selectFrom('applications')
      .select('id')
      .where('name', '=', GAME)
      .executeTakeFirstOrThrow()
  ).id;
if (values.approve !== undefined) await applications.adminUpdate(clientId, { grant_flags: [values.approve] });

/** Creates the game and `count` players, and answers the game's id and one access token per player. */
async function mint(count: number): Promise<{ clientId: string; tokens: string[]; userIds: string[] }> {
  // One player registers as a person does (scrypt and all); the others are copies of that row with their own
  // id, name and email: hashing 1,000 passwords would take longer than the benchmark.
  const first = await accounts.createUser({
    username: 'bench0',
    email: 'bench0@example.com',
    password: 'bench password',
  });
  const template = await hearth.storage.db
    .selectFrom('users')
    .selectAll()
    .where('id', '=', first.user.id)
    .executeTakeFirstOrThrow();
  const userIds = [first.user.id];
  const rows = [];
  for (let i = 1; i < count; i++) {
    // Snowflakes from the first milliseconds of the epoch: no generator of this server will ever give them.
    const id = (BigInt(i) << 22n).toString();
    userIds.push(id);
    rows.push({ ...template, id, username: `bench${i}`, email: `bench${i}@example.com` });
  }
  for (let i = 0; i < rows.length; i += 500) {
    await hearth.storage.db
      .insertInto('users')
      .values(rows.slice(i, i + 500))
      .execute();
  }

  const game = await applications.createApplication({
    name: GAME,
    redirect_uris: [REDIRECT_URI],
    public_client: false,
  });
  const clientId = game.application.id;

  // The code flow of each player, through the services the HTTP routes call: consent, then the exchange.
  const tokens: string[] = [];
  const authTime = hearth.clock.now();
  for (const userId of userIds) {
    const request = await oauth2.checkAuthorizationRequest({
      client_id: clientId,
      response_type: 'code',
      scope: SCOPE,
      redirect_uri: REDIRECT_URI,
    });
    const location = new URL(await oauth2.decide({ id: userId, authTime }, request, true));
    const code = location.searchParams.get('code');
    if (!code) throw new Error(`consent gave no code: ${location}`);
    const granted = await oauth2.token(
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: clientId,
        client_secret: game.clientSecret,
      },
      undefined,
    );
    tokens.push(granted.access_token);
  }
  return { clientId, tokens, userIds };
}

answerRequests(async (request) => {
  switch (request.cmd) {
    case 'players':
      if (!minted) throw new Error('this process minted no players (no --players)');
      return minted.tokens;
    case 'publish': {
      const count = Number(request['count']);
      const data = request['data'];
      if (!Number.isInteger(count) || count < 1 || typeof data !== 'object' || data === null) {
        throw new Error('publish needs a count and a data object');
      }
      const published: Promise<void>[] = [];
      for (let i = 0; i < count; i++) {
        published.push(
          hearth.bus.publish({
            type: BENCH_EVENT_TYPE,
            data: data as Record<string, unknown>,
            audience: { applicationId: clientId },
          }),
        );
      }
      await Promise.all(published);
      return { published: count, sessions: hearth.gateway.registry.size };
    }
    case 'stream':
      return stream(request);
    case 'memory':
      return sampleMemory(() => hearth.gateway.registry.size);
    case 'cpu':
      return sampleCpu();
    case 'heap-snapshot':
      // For the profile notes: `tsx bench/heap-top.ts <before> <after>` names what the sessions hold.
      return { path: writeHeapSnapshot(String(request['path'])) };
    case 'befriend': {
      const [host, ...friends] = minted?.userIds ?? [];
      if (!host) throw new Error('this process minted no players (no --players)');
      const since = hearth.clock.now();
      const rows = friends.flatMap((friend) => [
        { user_id: host, target_id: friend, type: 1, since },
        { user_id: friend, target_id: host, type: 1, since },
      ]);
      for (let i = 0; i < rows.length; i += 500) {
        await hearth.storage.db
          .insertInto('relationships')
          .values(rows.slice(i, i + 500))
          .execute();
      }
      return { friends: friends.length };
    }
    case 'presence': {
      // The change a host's op 3 makes, past the gateway's 5-per-20-s check: the service, the bus, the
      // friends lookup, PRESENCE_UPDATE to every friend's session.
      const host = minted?.userIds[0];
      if (!host) throw new Error('this process minted no players (no --players)');
      await hearth.services.presence.updated(
        { id: 'bench-host-session', userId: host, applicationId: clientId },
        { status: 'online', activities: [{ name: `round ${String(request['round'])}`, type: 0 }] },
      );
      return { published: 1, sessions: hearth.gateway.registry.size };
    }
    case 'users': {
      // As the HTTP API serializes them (a message's author is this object), read with a session of the
      // first player; minimal-lobby serves these players under the same tokens.
      const userIds = minted?.userIds ?? [];
      if (userIds.length === 0) throw new Error('this process minted no players (no --players)');
      const session = await accounts.createSession(userIds[0]!);
      const users: unknown[] = [];
      for (const userId of userIds) {
        const reply = await hearth.http.inject({
          method: 'GET',
          url: `/api/v10/users/${userId}`,
          headers: { authorization: session },
        });
        if (reply.statusCode !== 200) throw new Error(`GET /users/${userId} answered ${reply.statusCode}`);
        users.push(reply.json());
      }
      return users;
    }
    case 'guild': {
      // What people's clients hold: a guild they are all members of, its channel, a session each.
      const [owner, ...others] = minted?.userIds ?? [];
      if (!owner) throw new Error('this process minted no players (no --players)');
      const { guilds, channels } = hearth.services;
      const guild = await guilds.createGuild(owner, { name: 'Bench Guild' });
      for (const userId of others) await guilds.addMember(guild.id, userId);
      const channel = await channels.createChannel(owner, guild.id, { name: 'general' }, null);
      const sessions: string[] = [];
      for (const userId of [owner, ...others]) sessions.push(await accounts.createSession(userId));
      return { guildId: guild.id, channelId: channel.id, sessions };
    }
    default:
      throw new Error(`unknown command ${request.cmd}`);
  }
});

/**
 * A steady stream of events from this node (cross-node): event i is due at `i / rate` s after the start and
 * carries that time (`metadata.sent_at`, ms since the epoch at sub-ms resolution, comparable between
 * processes of one machine) with its run and number, so a late publish counts in the delivery's latency.
 * Each goes to one player, with the game as its application, as a lobby message to one member does.
 */
async function stream(request: Record<string, unknown>): Promise<unknown> {
  const { rate, count, from, to, run, data } = request;
  const userIds = minted?.userIds ?? [];
  if (
    typeof rate !== 'number' ||
    rate <= 0 ||
    typeof count !== 'number' ||
    !Number.isInteger(count) ||
    count < 1 ||
    typeof from !== 'number' ||
    typeof to !== 'number' ||
    !(Number.isInteger(from) && Number.isInteger(to) && 0 <= from && from < to && to <= userIds.length) ||
    typeof run !== 'string' ||
    typeof data !== 'object' ||
    data === null
  ) {
    throw new Error(
      'stream needs a rate, a count, a run tag, players [from, to) this process minted, and data',
    );
  }
  const players = to - from;
  const paced = await paceStream(rate, count, (i, dueAt) =>
    hearth.bus.publish({
      type: BENCH_EVENT_TYPE,
      data: streamEvent(data as Record<string, unknown>, run, i, dueAt),
      audience: { users: [userIds[from + (i % players)]!], applicationId: clientId },
    }),
  );
  return { ...paced, published: count, sessions: hearth.gateway.registry.size };
}

await hearth.listen();
process.stdout.write(`hearth-gateway listening on ${hearth.url}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    hearth.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
