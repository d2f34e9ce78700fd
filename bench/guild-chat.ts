import { join } from 'node:path';
import type { Benchmark, Result } from './benchmark.js';
import { alternateRuns, Chat, deliveredFigures, sentFigures } from './lib/chat.js';
import type { ServerProcess } from './lib/children.js';
import { Fleet, gatewayUrl, startAll, startBareWs, startHearthGateway } from './lib/gateway.js';
import { JsonClient } from './lib/http.js';
import { progress } from './lib/progress.js';
import { scratchDir } from './lib/scratch.js';

/** Guild members, every one connected to the gateway as a different person. */
const MEMBERS = 100;
/** Members posting at once, each one message after another (the next once the last was answered). */
const SENDERS = 10;
/** How long the senders post in each run; a run then waits until every member has every message. */
const SEND_SECONDS = 3;
/** Measured runs per side, in the order AB BA AB, after one warm-up run per side. */
const ROUNDS = 3;
const DRAIN_TIMEOUT_MS = 30_000;
const CONNECT = { concurrency: 25, timeoutMs: 30_000 };
/** Each sender would pass the default 50 requests/s; the limiter stays on (its cost counts) but is not reached. */
const RATE_LIMIT_GLOBAL = 1_000_000_000;
const CONTENT = 'gg! same channel tomorrow at nine? I can host again, bring the new map';

interface BenchGuild {
  guildId: string;
  channelId: string;
  /** A user session token per member, the owner first. */
  sessions: string[];
}

/**
 * End-to-end guild chat: members of one 100-member guild post messages into its text channel over HTTP
 * (`POST /channels/{id}/messages`), and every member's gateway session receives each as MESSAGE_CREATE.
 * Beside it, as in lobby-chat, the raw fan-out of gateway-fanout's baseline: a bare `ws` server pushing the
 * same number of frames, byte for byte one Hearth delivered, to 100 clients.
 */
const guildChat: Benchmark = {
  name: 'guild-chat',
  description: `messages posted into a channel of a ${MEMBERS}-member guild, delivered to every member's session`,
  timeoutSeconds: 150,
  async run(): Promise<Result[]> {
    const dir = scratchDir('hearth-bench-');
    const servers: ServerProcess[] = [];
    const fleets: Fleet[] = [];
    let http: JsonClient | undefined;
    try {
      progress(`  starting Hearth (minting ${MEMBERS} people, one guild of them all) and bare ws`);
      const [hearth, bare] = await startAll(servers, [
        startHearthGateway({
          players: MEMBERS,
          database: `sqlite:${join(dir.path, 'guild.sqlite')}`,
          rateLimitGlobal: RATE_LIMIT_GLOBAL,
          exposeGc: false,
        }),
        startBareWs({ exposeGc: false }),
      ]);
      const guild = await benchGuild(hearth);
      const client = new JsonClient(hearth.url, SENDERS);
      http = client;

      progress(`  connecting ${MEMBERS} members to Hearth's gateway, ${MEMBERS} clients to bare ws`);
      const path = `/api/v10/channels/${guild.channelId}/messages`;
      const chat = new Chat({
        members: MEMBERS,
        sendSeconds: SEND_SECONDS,
        drainTimeoutMs: DRAIN_TIMEOUT_MS,
        postedStatus: 200,
        // The nonce is echoed in MESSAGE_CREATE: it tells the run and the message number.
        post: (token, tag, seq) =>
          client.send('POST', path, token, { content: CONTENT, nonce: `${tag}:${seq}` }),
        identify: (data) => {
          const nonce = (data as { nonce?: unknown } | null)?.nonce;
          if (typeof nonce !== 'string') return undefined;
          const [tag, seq] = nonce.split(':');
          return { tag, seq };
        },
      });
      const hearthFleet = await Fleet.open({
        label: 'Hearth',
        url: gatewayUrl(hearth.url),
        tokens: guild.sessions,
        // A person's client identifies with its session token as it is.
        identifyAs: (token) => token,
        eventType: 'MESSAGE_CREATE',
        onEvent: (client, data, at) => chat.delivered(client, data, at),
        ...CONNECT,
      });
      fleets.push(hearthFleet);
      const bareFleet = await Fleet.open({
        label: 'bare ws',
        url: gatewayUrl(bare.url),
        count: MEMBERS,
        eventType: 'MESSAGE_CREATE',
        ...CONNECT,
      });
      fleets.push(bareFleet);

      const { chats, fanouts } = await alternateRuns({
        chat,
        hearthFleet,
        bareFleet,
        bare,
        senders: guild.sessions.slice(0, SENDERS),
        rounds: ROUNDS,
        eventName: 'MESSAGE_CREATE',
        drainTimeoutMs: DRAIN_TIMEOUT_MS,
      });

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
            `one guild of ${MEMBERS} members with one text channel (@everyone's default permissions), every ` +
              `member a gateway session (a user session token) in the bench process parsing every frame`,
            `Hearth: ${SENDERS} members post POST /channels/:id/messages concurrently, each its next message ` +
              `once the last was answered (200), for ${SEND_SECONDS} s a run; sent = messages / time from ` +
              `the first POST to the last answer; its latency columns: the POST round trip`,
            `the per-identity rate limit stays on with a budget of ${RATE_LIMIT_GLOBAL} /s; SQLite on a ` +
              `temporary file (WAL); AutoMod runs its check on every message (the guild has no rules)`,
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
            `delivered = MESSAGE_CREATE dispatches received by all members / time from the first POST ` +
              `(bare ws: the publish) to the last delivery; every member must receive every message exactly ` +
              `once (the message's nonce names its run and number)`,
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

export default guildChat;

/** Asks the Hearth child for the guild of every member, its channel, and a session per member. */
async function benchGuild(hearth: ServerProcess): Promise<BenchGuild> {
  const reply = (await hearth.request({ cmd: 'guild' }, 60_000)) as Partial<BenchGuild> | null;
  const sessions = reply?.sessions;
  if (
    typeof reply?.guildId !== 'string' ||
    typeof reply.channelId !== 'string' ||
    !Array.isArray(sessions) ||
    sessions.length !== MEMBERS ||
    !sessions.every((s): s is string => typeof s === 'string')
  )
    throw new Error(`hearth-gateway answered no guild of ${MEMBERS}: ${JSON.stringify(reply)}`);
  return { guildId: reply.guildId, channelId: reply.channelId, sessions };
}
