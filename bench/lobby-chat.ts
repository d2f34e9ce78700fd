import { join } from 'node:path';
import type { Benchmark, Result } from './benchmark.js';
import {
  alternateRuns,
  Chat,
  type ChatRun,
  deliveredFigures,
  hearthDelivered,
  sentFigures,
} from './lib/chat.js';
import type { ServerProcess } from './lib/children.js';
import { Fleet, gatewayUrl, playerTokens, startAll, startBareWs, startHearthGateway } from './lib/gateway.js';
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
 * bare `ws` server pushing the same number of frames, byte for byte one Hearth delivered, to 100 clients.
 */
const lobbyChat: Benchmark = {
  name: 'lobby-chat',
  description: `messages posted over HTTP into a ${MEMBERS}-member lobby, delivered to every member's session`,
  timeoutSeconds: 150,
  async run(): Promise<Result[]> {
    const dir = scratchDir('hearth-bench-');
    const servers: ServerProcess[] = [];
    const fleets: Fleet[] = [];
    let http: JsonClient | undefined;
    try {
      progress(`  starting Hearth (minting ${MEMBERS} players with tokens, approved game) and bare ws`);
      const [hearth, bare] = await startAll(servers, [
        startHearthGateway({
          players: MEMBERS,
          database: `sqlite:${join(dir.path, 'lobby.sqlite')}`,
          approve: APPROVAL,
          rateLimitGlobal: RATE_LIMIT_GLOBAL,
          exposeGc: false,
        }),
        startBareWs({ exposeGc: false }),
      ]);
      const tokens = await playerTokens(hearth);
      const client = new JsonClient(hearth.url, SENDERS);
      http = client;
      const lobbyId = await joinLobby(client, tokens);

      progress(`  connecting ${MEMBERS} members to Hearth's gateway, ${MEMBERS} clients to bare ws`);
      const path = `/api/v10/lobbies/${lobbyId}/messages`;
      const chat = new Chat({
        members: MEMBERS,
        sendSeconds: SEND_SECONDS,
        drainTimeoutMs: DRAIN_TIMEOUT_MS,
        postedStatus: 201,
        post: (token, tag, seq) =>
          client.send('POST', path, `Bearer ${token}`, {
            content: CONTENT,
            metadata: { run: tag, seq: String(seq) },
          }),
        identify: (data) => {
          const metadata = (data as { metadata?: { run?: unknown; seq?: unknown } } | null)?.metadata;
          return metadata && { tag: metadata.run, seq: metadata.seq };
        },
      });
      const hearthFleet = await Fleet.open({
        label: 'Hearth',
        url: gatewayUrl(hearth.url),
        tokens,
        onEvent: (client, data, at) => chat.delivered(client, data, at),
        ...CONNECT,
      });
      fleets.push(hearthFleet);
      const bareFleet = await Fleet.open({
        label: 'bare ws',
        url: gatewayUrl(bare.url),
        count: MEMBERS,
        ...CONNECT,
      });
      fleets.push(bareFleet);

      const senders = tokens.slice(0, SENDERS);
      const { chats, fanouts } = await alternateRuns({
        chat,
        hearthFleet,
        bareFleet,
        bare,
        senders,
        rounds: ROUNDS,
        eventName: 'LOBBY_MESSAGE_CREATE',
        drainTimeoutMs: DRAIN_TIMEOUT_MS,
      });

      // Latency at a fixed, moderate load, beside the closed loop's saturation throughput.
      const pacedRuns: ChatRun[] = [];
      for (let i = 0; i < PACED_ROUNDS; i++) {
        const run = await chat.run(hearthFleet, senders, { perSenderPerSecond: PACED_PER_SENDER });
        pacedRuns.push(run);
        const sorted = Float64Array.from(run.latencies).sort();
        progress(
          `  offered ${i + 1}/${PACED_ROUNDS} Hearth: ${run.messages} messages at ` +
            `${SENDERS * PACED_PER_SENDER}/s offered, ${run.deliveries} deliveries, p50 ` +
            `${percentile(sorted, 0.5).toFixed(2)} ms, p99 ${percentile(sorted, 0.99).toFixed(2)} ms`,
        );
      }
      const offeredRate = SENDERS * PACED_PER_SENDER * MEMBERS;
      const paced = hearthDelivered(pacedRuns);
      const pacedP99 = paced.latencyP99Ms ?? Number.NaN;

      const sample = hearthFleet.sample ?? '';
      const sent = sentFigures(chats, fanouts);
      const delivered = deliveredFigures(chats, fanouts);
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
          metric: `delivered at ${SENDERS * PACED_PER_SENDER} messages/s offered`,
          unit: 'events/s',
          baseline: {
            label: 'offered',
            throughput: offeredRate,
            rounds: pacedRuns.map(() => offeredRate),
          },
          hearth: paced,
          ratio: paced.throughput / offeredRate,
          notes: [
            `offered rate: ${SENDERS} senders each post ${PACED_PER_SENDER} messages/s on a fixed schedule ` +
              `(staggered), answered or not, for ${SEND_SECONDS} s a run; ${PACED_ROUNDS} runs after the ` +
              `closed-loop ones, medians; the baseline row is the offered delivery rate ` +
              `(${SENDERS * PACED_PER_SENDER} × ${MEMBERS} members), so a ratio of 1.0 means Hearth kept up`,
            `latency: per delivery, from the time its message was scheduled to be posted to its arrival ` +
              `(a late bench timer counts against Hearth); every member must receive every message once`,
            `p99 send→delivery ${pacedP99.toFixed(2)} ms: ${pacedP99 < PACED_P99_TARGET_MS ? 'meets' : 'misses'} ` +
              `the ${PACED_P99_TARGET_MS} ms target (runs: ${pacedRuns
                .map((run) => percentile(Float64Array.from(run.latencies).sort(), 0.99).toFixed(1))
                .join(' / ')} ms; median messages per run ${median(pacedRuns.map((run) => run.messages))})`,
          ],
        },
      ];
    } finally {
      http?.close();
      await Promise.allSettled(fleets.map((fleet) => fleet.close(5_000)));
      await Promise.allSettled(servers.map((server) => server.stop()));
      dir.remove();
    }
  },
};

export default lobbyChat;

/** Every player joins the lobby by its secret, as the SDK's CreateOrJoinLobby does; answers its id. */
async function joinLobby(http: JsonClient, tokens: readonly string[]): Promise<string> {
  let lobbyId: string | undefined;
  let members = 0;
  for (const token of tokens) {
    const reply = await http.send('PUT', '/api/v10/lobbies', `Bearer ${token}`, { secret: SECRET });
    if (reply.status !== 200) throw new Error(`joining the lobby answered ${reply.status}: ${reply.body}`);
    const lobby = JSON.parse(reply.body) as { id?: unknown; members?: unknown };
    if (typeof lobby.id !== 'string' || (lobbyId !== undefined && lobby.id !== lobbyId)) {
      throw new Error(`joining the lobby answered another lobby: ${reply.body}`);
    }
    lobbyId = lobby.id;
    members = Array.isArray(lobby.members) ? lobby.members.length : 0;
  }
  if (lobbyId === undefined || members !== tokens.length) {
    throw new Error(`the lobby has ${members} members, not ${tokens.length}`);
  }
  return lobbyId;
}
