import { join } from 'node:path';
import type { Benchmark, Figures, Result } from './benchmark.js';
import type { ServerProcess } from './lib/children.js';
import {
  type Burst,
  Fleet,
  gatewayUrl,
  playerTokens,
  publishTo,
  startAll,
  startBareWs,
  startHearthGateway,
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
const CONNECT = { concurrency: 25, timeoutMs: 30_000 };
/** Unapproved games are held to 100 messages per 2 h (PROTOCOL.md §A.3): the game is approved. */
const APPROVAL = 'CommunicationFeaturesApproved';
/** Each sender would pass the default 50 requests/s; the limiter stays on (its cost counts) but is not reached. */
const RATE_LIMIT_GLOBAL = 1_000_000_000;
const SECRET = 'hearth-bench-lobby';
const CONTENT = 'gg! same lobby tomorrow at nine? I can host again, bring the new map';

/** One Hearth run: messages posted for SEND_SECONDS, then until every member had every one. */
interface ChatRun {
  messages: number;
  /** From the first POST to the last answer. */
  sendSeconds: number;
  /** POST round trips, ms. */
  posts: Float64Array;
  deliveries: number;
  /** From the first POST to the last delivery. */
  deliverSeconds: number;
  /** Per delivery, from just before its message's POST to its arrival, ms. */
  latencies: Float64Array;
}

/** A bare ws run: as many events as Hearth's last run sent, at once, to every client. */
interface FanoutRun {
  messages: number;
  burst: Burst;
}

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
      const chat = new Chat();
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
      const chats: ChatRun[] = [];
      const fanouts: FanoutRun[] = [];
      /** How many messages Hearth's last run (the warm-up too) sent: the size of the next bare run. */
      let lastMessages = 0;
      const hearthRun = async (what: string) => {
        const run = await chat.run(client, hearthFleet, lobbyId, senders);
        chats.push(run);
        lastMessages = run.messages;
        progress(
          `  ${what} Hearth: ${Math.round(run.messages / run.sendSeconds)} messages/s, ` +
            `${Math.round(run.deliveries / run.deliverSeconds)} deliveries/s ` +
            `(${run.messages} messages, ${run.deliveries} deliveries in ${run.deliverSeconds.toFixed(2)} s)`,
        );
      };
      // The bare side pushes as many events as Hearth's last run delivered to each member, in frames of the
      // bytes Hearth sent.
      const bareRun = async (what: string) => {
        const messages = lastMessages;
        const payload = hearthFleet.sample;
        if (payload === undefined) throw new Error('Hearth delivered no LOBBY_MESSAGE_CREATE to sample');
        const burst = await bareFleet.burst(
          messages,
          () => publishTo(bare, { cmd: 'publish', count: messages, payload }, MEMBERS, DRAIN_TIMEOUT_MS),
          DRAIN_TIMEOUT_MS,
        );
        if (bareFleet.sample !== payload) throw new Error('bare ws delivered other bytes than it was given');
        fanouts.push({ messages, burst });
        progress(
          `  ${what} bare ws: ${Math.round(messages / burst.seconds)} messages/s, ` +
            `${Math.round(burst.latencies.length / burst.seconds)} deliveries/s ` +
            `(${messages} messages, ${burst.latencies.length} deliveries in ${burst.seconds.toFixed(2)} s)`,
        );
      };

      await hearthRun('warm-up');
      await bareRun('warm-up');
      chats.length = 0;
      fanouts.length = 0;
      for (let i = 0; i < ROUNDS; i++) {
        const order = i % 2 === 0 ? [bareRun, hearthRun] : [hearthRun, bareRun];
        for (const side of order) await side(`round ${i + 1}/${ROUNDS}`);
      }

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

/** One run's bookkeeping: when each message was posted, and which member received it when. */
interface Pending {
  /** Tells this run's messages from another's (in their metadata). */
  tag: string;
  /** performance.now() just before each message's POST, by its number. */
  postedAt: number[];
  /** Per message, which members received it (1 byte per member). */
  receivedBy: Uint8Array[];
  latencies: number[];
  lastDelivery: number;
  /** Set once the senders stop: every member must then receive every message posted. */
  expected: number | undefined;
  failure: Error | undefined;
  done: () => void;
}

/** Posts messages into the lobby and matches each delivery to its message, run after run. */
class Chat {
  #pending: Pending | undefined;
  #runs = 0;
  /** A delivery between runs: reported by the next run (throwing in a socket's handler would crash). */
  #stray: Error | undefined;

  /** A member's session received a LOBBY_MESSAGE_CREATE. */
  delivered(client: number, data: unknown, at: number): void {
    const pending = this.#pending;
    const metadata = (data as { metadata?: { run?: unknown; seq?: unknown } } | null)?.metadata;
    if (!pending || metadata?.run !== pending.tag) {
      const stray = new Error(
        `member ${client} received a message of no current run: ${JSON.stringify(data)}`,
      );
      if (pending) pending.failure ??= stray;
      else this.#stray ??= stray;
      return;
    }
    const seq = Number(metadata.seq);
    const receivedBy = pending.receivedBy[seq];
    const postedAt = pending.postedAt[seq];
    if (receivedBy === undefined || postedAt === undefined) {
      pending.failure ??= new Error(`member ${client} received unknown message ${String(metadata.seq)}`);
      return;
    }
    if (receivedBy[client] !== 0) {
      pending.failure ??= new Error(`member ${client} received message ${seq} twice`);
      return;
    }
    receivedBy[client] = 1;
    pending.latencies.push(at - postedAt);
    pending.lastDelivery = at;
    if (pending.latencies.length === pending.expected) pending.done();
  }

  async run(http: JsonClient, fleet: Fleet, lobbyId: string, senders: readonly string[]): Promise<ChatRun> {
    if (this.#stray) throw this.#stray;
    let done!: () => void;
    const drained = new Promise<void>((resolve) => {
      done = resolve;
    });
    const pending: Pending = {
      tag: String(this.#runs++),
      postedAt: [],
      receivedBy: [],
      latencies: [],
      lastDelivery: 0,
      expected: undefined,
      failure: undefined,
      done,
    };
    this.#pending = pending;
    try {
      const posts: number[] = [];
      let lastAnswer = 0;
      const started = performance.now();
      const deadline = started + SEND_SECONDS * 1000;
      const path = `/api/v10/lobbies/${lobbyId}/messages`;
      const sender = async (token: string) => {
        const authorization = `Bearer ${token}`;
        while (performance.now() < deadline && !pending.failure) {
          const seq = pending.postedAt.length;
          const body = { content: CONTENT, metadata: { run: pending.tag, seq: String(seq) } };
          pending.receivedBy.push(new Uint8Array(MEMBERS));
          const postedAt = performance.now();
          pending.postedAt.push(postedAt);
          const reply = await http.send('POST', path, authorization, body);
          lastAnswer = performance.now();
          posts.push(lastAnswer - postedAt);
          if (reply.status !== 201) {
            // The other senders stop at their next message.
            pending.failure ??= new Error(
              `POST ${path} answered ${reply.status}: ${reply.body.slice(0, 300)}`,
            );
            throw pending.failure;
          }
        }
      };
      await Promise.all(senders.map(sender));
      const messages = pending.postedAt.length;
      pending.expected = messages * MEMBERS;
      if (pending.latencies.length === pending.expected) done();

      let timer: NodeJS.Timeout | undefined;
      const failed = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const missing = pending.expected! - pending.latencies.length;
          reject(
            pending.failure ??
              fleet.failure ??
              new Error(`Hearth: ${missing} of ${pending.expected} deliveries missing after the timeout`),
          );
        }, DRAIN_TIMEOUT_MS);
      });
      try {
        await Promise.race([drained, failed]);
      } finally {
        clearTimeout(timer);
      }
      if (pending.failure) throw pending.failure;
      if (fleet.failure) throw fleet.failure;
      const run: ChatRun = {
        messages,
        sendSeconds: (lastAnswer - started) / 1000,
        posts: Float64Array.from(posts),
        deliveries: pending.latencies.length,
        deliverSeconds: (pending.lastDelivery - started) / 1000,
        latencies: Float64Array.from(pending.latencies),
      };
      return run;
    } finally {
      this.#pending = undefined;
    }
  }
}

function sentFigures(chats: readonly ChatRun[], fanouts: readonly FanoutRun[]) {
  const hearthRates = chats.map((c) => c.messages / c.sendSeconds);
  const bareRates = fanouts.map((f) => f.messages / f.burst.seconds);
  const baseline: Figures = { label: 'bare ws 8', throughput: median(bareRates), rounds: bareRates };
  const hearth: Figures = {
    label: 'Hearth',
    throughput: median(hearthRates),
    ...latencyFigures(chats.map((c) => c.posts)),
    rounds: hearthRates,
  };
  return { baseline, hearth };
}

function deliveredFigures(chats: readonly ChatRun[], fanouts: readonly FanoutRun[]) {
  const hearthRates = chats.map((c) => c.deliveries / c.deliverSeconds);
  const bareRates = fanouts.map((f) => f.burst.latencies.length / f.burst.seconds);
  const baseline: Figures = {
    label: 'bare ws 8',
    throughput: median(bareRates),
    ...latencyFigures(fanouts.map((f) => f.burst.latencies)),
    rounds: bareRates,
  };
  const hearth: Figures = {
    label: 'Hearth',
    throughput: median(hearthRates),
    ...latencyFigures(chats.map((c) => c.latencies)),
    rounds: hearthRates,
  };
  return { baseline, hearth };
}

/** The median over runs of each run's p50 and p99. */
function latencyFigures(runs: readonly Float64Array[]): { latencyP50Ms: number; latencyP99Ms: number } {
  const sorted = runs.map((samples) => Float64Array.from(samples).sort());
  return {
    latencyP50Ms: median(sorted.map((s) => percentile(s, 0.5))),
    latencyP99Ms: median(sorted.map((s) => percentile(s, 0.99))),
  };
}
