import { join } from 'node:path';
import type { Benchmark, Result } from './benchmark.js';
import {
  alternateChats,
  alternateRuns,
  type Chat,
  type ChatRun,
  type ChatSide,
  chatDelivered,
  chatSent,
  cpuPerMessageUs,
  deliveredFigures,
  lobbyMessagesChat,
  sentFigures,
} from './lib/chat.js';
import type { ServerProcess } from './lib/children.js';
import {
  Fleet,
  gatewayUrl,
  playerTokens,
  startAll,
  startBareWs,
  startHearthGateway,
  startMinimalLobby,
} from './lib/gateway.js';
import { JsonClient } from './lib/http.js';
import { median, percentile } from './lib/load.js';
import { progress } from './lib/progress.js';
import { scratchDir } from './lib/scratch.js';

/** Lobby members, every one connected to the gateway as a different player. */
const MEMBERS = 100;
/** Members posting at once, each one message after another (the next once the last was answered). */
const SENDERS = 10;
/** How long the senders post in each run; a run then waits until every member has every message. */
const SEND_SECONDS = 3;
/** Measured runs per side, in the order AB BA AB, after one warm-up run per side. */
const ROUNDS = 3;
const DRAIN_TIMEOUT_MS = 30_000;
/** The offered-rate runs: each sender posts this many messages a second on a schedule (10 × 10 = 100/s). */
const PACED_PER_SENDER = 10;
/** Offered-rate runs after the closed-loop ones; the figures are medians over them. */
const PACED_ROUNDS = 3;
/** What the offered-rate mode is for: p99 send→delivery below this at 100 messages/s (issue 20). */
const PACED_P99_TARGET_MS = 20;
const CONNECT = { concurrency: 25, timeoutMs: 30_000 };
/** Unapproved games are held to 100 messages per 2 h (PROTOCOL.md §A.3): the game is approved. */
const APPROVAL = 'CommunicationFeaturesApproved';
/** Each sender would pass the default 50 requests/s; the limiter stays on (its cost counts) but is not reached. */
const RATE_LIMIT_GLOBAL = 1_000_000_000;
const SECRET = 'hearth-bench-lobby';
const CONTENT = 'gg! same lobby tomorrow at nine? I can host again, bring the new map';

/**
 * End-to-end lobby chat: members of one 100-member lobby post messages over HTTP, and every member's gateway
 * session receives each as LOBBY_MESSAGE_CREATE. Beside it the raw fan-out of gateway-fanout's baseline: a
 * bare `ws` server pushing the same number of frames, byte for byte one Hearth delivered, to 100 clients;
 * and the minimal-work baseline (`baseline/minimal-lobby.ts`), the same chat by the same closed loop against
 * a server doing only what no implementation can skip.
 */
const lobbyChat: Benchmark = {
  name: 'lobby-chat',
  description: `messages posted over HTTP into a ${MEMBERS}-member lobby, delivered to every member's session`,
  timeoutSeconds: 240,
  async run(): Promise<Result[]> {
    const dir = scratchDir('hearth-bench-');
    const servers: ServerProcess[] = [];
    const fleets: Fleet[] = [];
    const clients: JsonClient[] = [];
    try {
      progress(
        `  starting Hearth (minting ${MEMBERS} players with tokens, approved game), bare ws and minimal work`,
      );
      const [hearth, bare, minimal] = await startAll(servers, [
        startHearthGateway({
          players: MEMBERS,
          database: `sqlite:${join(dir.path, 'lobby.sqlite')}`,
          approve: APPROVAL,
          rateLimitGlobal: RATE_LIMIT_GLOBAL,
          exposeGc: false,
        }),
        startBareWs({ exposeGc: false }),
        startMinimalLobby({ database: join(dir.path, 'minimal.sqlite') }),
      ]);
      const tokens = await playerTokens(hearth);
      const client = new JsonClient(hearth.url, SENDERS);
      clients.push(client);
      const { lobbyId, applicationId } = await joinLobby(client, tokens);
      // The same players, tokens and lobby on the minimal server, each user as Hearth serializes it.
      await minimal.request({
        cmd: 'setup',
        lobbyId,
        applicationId,
        tokens,
        users: await hearth.request({ cmd: 'users' }),
      });
      const minimalClient = new JsonClient(minimal.url, SENDERS);
      clients.push(minimalClient);

      progress(`  connecting ${MEMBERS} members to Hearth's gateway, ${MEMBERS} clients to bare ws`);
      const path = `/api/v10/lobbies/${lobbyId}/messages`;
      const chatWith = (http: JsonClient) =>
        lobbyMessagesChat({
          http,
          path,
          content: CONTENT,
          members: MEMBERS,
          sendSeconds: SEND_SECONDS,
          drainTimeoutMs: DRAIN_TIMEOUT_MS,
        });
      /** Every member's gateway session on `server`, each delivery handed to `chat`. */
      const membersOf = async (label: string, server: ServerProcess, chat: Chat) => {
        const fleet = await Fleet.open({
          label,
          url: gatewayUrl(server.url),
          tokens,
          onEvent: (client, data, at) => chat.delivered(client, data, at),
          ...CONNECT,
        });
        fleets.push(fleet);
        return fleet;
      };
      const chat = chatWith(client);
      const minimalChat = chatWith(minimalClient);
      const hearthFleet = await membersOf('Hearth', hearth, chat);
      const bareFleet = await Fleet.open({
        label: 'bare ws',
        url: gatewayUrl(bare.url),
        count: MEMBERS,
        ...CONNECT,
      });
      fleets.push(bareFleet);
      const minimalFleet = await membersOf('minimal work', minimal, minimalChat);

      const senders = tokens.slice(0, SENDERS);
      /** A chat server's closed loop against bare ws pushing as many of its frames, alternating. */
      const againstBareWs = (label: string, chat: Chat, fleet: Fleet) =>
        alternateRuns({
          chat,
          hearthFleet: fleet,
          bareFleet,
          bare,
          senders,
          rounds: ROUNDS,
          eventName: 'LOBBY_MESSAGE_CREATE',
          drainTimeoutMs: DRAIN_TIMEOUT_MS,
          label,
        });
      const { chats, fanouts } = await againstBareWs('Hearth', chat, hearthFleet);

      const hearthSide: ChatSide = { label: 'Hearth', chat, fleet: hearthFleet, server: hearth };
      const minimalSide: ChatSide = {
        label: 'minimal work',
        chat: minimalChat,
        fleet: minimalFleet,
        server: minimal,
      };
      // The same closed loop against the minimal-work server, alternating with Hearth again.
      const [hearthChats, minimalChats] = await alternateChats({
        first: hearthSide,
        second: minimalSide,
        senders,
        rounds: ROUNDS,
      });
      const minimalSample = minimalFleet.sample ?? '';
      assertSameShape(hearthFleet.sample ?? '', minimalSample);

      // The floor: the minimal server against bare ws, interleaved as Hearth was, bare ws pushing its frames.
      const floor = await againstBareWs('minimal work', minimalChat, minimalFleet);
      const floorDelivered = deliveredFigures(floor.chats, floor.fanouts);
      floorDelivered.hearth.label = 'minimal work';

      // Latency at a fixed, moderate load, beside the closed loop's saturation throughput: the minimal server
      // at the same offered rate, alternating, shows what of the tail is the host's.
      const pace = { perSenderPerSecond: PACED_PER_SENDER };
      const [pacedRuns, minimalPacedRuns] = await alternateChats({
        first: hearthSide,
        second: minimalSide,
        senders,
        rounds: PACED_ROUNDS,
        pace,
      });
      const offeredRate = SENDERS * PACED_PER_SENDER * MEMBERS;
      const paced = chatDelivered('Hearth', pacedRuns);
      const minimalPaced = chatDelivered('minimal work', minimalPacedRuns);
      const pacedP99 = paced.latencyP99Ms ?? Number.NaN;
      const p99s = (runs: readonly ChatRun[]) =>
        runs.map((run) => percentile(Float64Array.from(run.latencies).sort(), 0.99).toFixed(1)).join(' / ');

      const sample = hearthFleet.sample ?? '';
      const sent = sentFigures(chats, fanouts);
      const delivered = deliveredFigures(chats, fanouts);
      const versus = {
        sent: { hearth: chatSent('Hearth', hearthChats), minimal: chatSent('minimal work', minimalChats) },
        delivered: {
          hearth: chatDelivered('Hearth', hearthChats),
          minimal: chatDelivered('minimal work', minimalChats),
        },
      };
      const cpu = {
        hearth: cpuPerMessageUs(hearthChats),
        minimal: cpuPerMessageUs(minimalChats),
        bare: cpuPerMessageUs(fanouts),
      };
      const us = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(0)} µs`);
      return [
        {
          metric: 'sent',
          unit: 'messages/s',
          baseline: sent.baseline,
          hearth: sent.hearth,
          ratio: sent.hearth.throughput / sent.baseline.throughput,
          notes: [
            `one lobby of ${MEMBERS} members (joined with PUT /lobbies by secret, as players), every member a ` +
              `gateway session (Bearer token, openid sdk.social_layer) in the bench process parsing every frame`,
            `Hearth: ${SENDERS} members post POST /lobbies/:id/messages concurrently, each its next message ` +
              `once the last was answered (201), for ${SEND_SECONDS} s a run; sent = messages / time from ` +
              `the first POST to the last answer; its latency columns: the POST round trip`,
            `Hearth's game has ${APPROVAL} (no pre-approval quota); the per-identity rate limit stays on ` +
              `with a budget of ${RATE_LIMIT_GLOBAL} /s; SQLite on a temporary file (WAL)`,
            `bare ws (gateway-fanout's baseline): per run, as many events as Hearth's last run sent, all ` +
              `at once, each to every one of ${MEMBERS} clients; sent = events / time until all delivered`,
          ],
        },
        {
          metric: 'delivered',
          unit: 'events/s',
          baseline: delivered.baseline,
          hearth: delivered.hearth,
          ratio: delivered.hearth.throughput / delivered.baseline.throughput,
          notes: [
            `delivered = LOBBY_MESSAGE_CREATE dispatches received by all members / time from the first ` +
              `POST (bare ws: the publish) to the last delivery; every member must receive every message ` +
              `exactly once`,
            `latency: Hearth, per delivery, from just before its message's POST to its arrival; bare ws, ` +
              `as gateway-fanout, each delivery's time from the start of its burst; frames of ` +
              `${Buffer.byteLength(sample)} bytes (bare ws sends a frame Hearth sent, byte for byte); ` +
              `1 warm-up and ${ROUNDS} runs per side (AB BA AB), medians`,
          ],
        },
        {
          metric: 'sent vs minimal work',
          unit: 'messages/s',
          baseline: versus.sent.minimal,
          hearth: versus.sent.hearth,
          ratio: versus.sent.hearth.throughput / versus.sent.minimal.throughput,
          notes: [
            `minimal work (baseline/minimal-lobby.ts): Fastify 5 and ws 8 on one port, the same players, ` +
              `tokens and lobby id; a message: Bearer token hashed (SHA-256) and read with its user in one ` +
              `indexed SQLite lookup, membership checked in memory, the JSON body parsed, the row inserted ` +
              `(WAL, synchronous NORMAL, statements prepared once), the message object serialized once, one ` +
              `frame with its own s to each member session, 201; group commit as Hearth's (the messages of ` +
              `the requests read in one turn in one transaction, then written to each socket together)`,
            `the same closed loop as against bare ws (${SENDERS} senders, ${SEND_SECONDS} s runs), its own ` +
              `1 warm-up and ${ROUNDS} runs per side (AB BA AB) after the bare ws ones, medians`,
          ],
        },
        {
          metric: 'delivered vs minimal work',
          unit: 'events/s',
          baseline: versus.delivered.minimal,
          hearth: versus.delivered.hearth,
          ratio: versus.delivered.hearth.throughput / versus.delivered.minimal.throughput,
          notes: [
            `every member must receive every message exactly once, on both sides; LOBBY_MESSAGE_CREATE ` +
              `frames of ${Buffer.byteLength(sample)} bytes (Hearth) and ${Buffer.byteLength(minimalSample)} ` +
              `(minimal work; the same fields in the same order, checked)`,
            `server CPU per message (user + system from /proc, median of runs): Hearth ${us(cpu.hearth)}, ` +
              `minimal work ${us(cpu.minimal)}, bare ws ${us(cpu.bare)} (bare ws: per event pushed to ` +
              `${MEMBERS} clients)`,
          ],
        },
        {
          metric: 'delivered, minimal work vs bare ws',
          unit: 'events/s',
          baseline: floorDelivered.baseline,
          hearth: floorDelivered.hearth,
          ratio: floorDelivered.hearth.throughput / floorDelivered.baseline.throughput,
          notes: [
            `the floor: the fraction of bare ws that a server doing only the unavoidable reaches; minimal ` +
              `work's closed loop against bare ws pushing as many of its frames, 1 warm-up and ${ROUNDS} ` +
              `runs per side (AB BA AB), after the comparison with Hearth`,
          ],
        },
        {
          metric: `delivered at ${SENDERS * PACED_PER_SENDER} messages/s offered`,
          unit: 'events/s',
          baseline: minimalPaced,
          hearth: paced,
          ratio: paced.throughput / minimalPaced.throughput,
          notes: [
            `offered rate: ${SENDERS} senders each post ${PACED_PER_SENDER} messages/s on a fixed schedule ` +
              `(staggered), answered or not, for ${SEND_SECONDS} s a run; after the closed-loop ones, 1 ` +
              `warm-up and ${PACED_ROUNDS} runs per side (AB BA AB), Hearth and minimal work, medians; ` +
              `${offeredRate} deliveries/s offered (${SENDERS * PACED_PER_SENDER} × ${MEMBERS} members): ` +
              `Hearth kept up at ${(paced.throughput / offeredRate).toFixed(3)}×, minimal work at ` +
              `${(minimalPaced.throughput / offeredRate).toFixed(3)}×`,
            `latency: per delivery, from the time its message was scheduled to be posted to its arrival ` +
              `(a late bench timer counts against the server); every member must receive every message once`,
            `p99 send→delivery ${pacedP99.toFixed(2)} ms: ${pacedP99 < PACED_P99_TARGET_MS ? 'meets' : 'misses'} ` +
              `the ${PACED_P99_TARGET_MS} ms target (Hearth's runs: ${p99s(pacedRuns)} ms; minimal work's: ` +
              `${p99s(minimalPacedRuns)} ms; median messages per run ` +
              `${median(pacedRuns.map((run) => run.messages))})`,
          ],
        },
      ];
    } finally {
      for (const http of clients) http.close();
      await Promise.allSettled(fleets.map((fleet) => fleet.close(5_000)));
      await Promise.allSettled(servers.map((server) => server.stop()));
      dir.remove();
    }
  },
};

export default lobbyChat;

/**
 * Every player joins the lobby by its secret, as the SDK's CreateOrJoinLobby does; answers its id and its
 * application's.
 */
async function joinLobby(
  http: JsonClient,
  tokens: readonly string[],
): Promise<{ lobbyId: string; applicationId: string }> {
  let lobbyId: string | undefined;
  let applicationId: unknown;
  let members = 0;
  for (const token of tokens) {
    const reply = await http.send('PUT', '/api/v10/lobbies', `Bearer ${token}`, { secret: SECRET });
    if (reply.status !== 200) throw new Error(`joining the lobby answered ${reply.status}: ${reply.body}`);
    const lobby = JSON.parse(reply.body) as { id?: unknown; application_id?: unknown; members?: unknown };
    if (typeof lobby.id !== 'string' || (lobbyId !== undefined && lobby.id !== lobbyId)) {
      throw new Error(`joining the lobby answered another lobby: ${reply.body}`);
    }
    lobbyId = lobby.id;
    applicationId = lobby.application_id;
    members = Array.isArray(lobby.members) ? lobby.members.length : 0;
  }
  if (lobbyId === undefined || members !== tokens.length) {
    throw new Error(`the lobby has ${members} members, not ${tokens.length}`);
  }
  if (typeof applicationId !== 'string') throw new Error('the lobby has no application_id');
  return { lobbyId, applicationId };
}

/**
 * The minimal server's frame must carry what Hearth's does: the same fields, nested ones included, in the
 * same order and of the same types (values differ: ids, times, `s`).
 */
function assertSameShape(hearthFrame: string, minimalFrame: string): void {
  const shape = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value === null ? 'null' : typeof value;
    if (Array.isArray(value)) return value.map(shape);
    return Object.entries(value).map(([key, entry]) => [key, shape(entry)]);
  };
  const [expected, actual] = [hearthFrame, minimalFrame].map((frame) =>
    JSON.stringify(shape(JSON.parse(frame))),
  );
  if (expected !== actual) {
    throw new Error(`minimal work's frame differs in shape from Hearth's:\n${minimalFrame}\n${hearthFrame}`);
  }
}
