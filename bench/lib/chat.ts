// What the chat benchmarks share (lobby-chat, guild-chat): members post messages over HTTP while every
// member's gateway session receives each one; beside it, bare `ws` pushes as many frames of the bytes
// Hearth delivered. The runs alternate (one warm-up per side, then AB BA AB…), and the figures are medians.
import type { Figures } from '../benchmark.js';
import type { ServerProcess } from './children.js';
import { type Burst, type Fleet, publishTo } from './gateway.js';
import { collectGarbage } from './gc.js';
import type { JsonClient, Reply } from './http.js';
import { median, percentile } from './load.js';
import { progress } from './progress.js';

/** How a chat benchmark posts its messages and recognizes them when they are delivered. */
export interface ChatPlan {
  /** Members of the lobby or guild: every one a gateway session receiving every message. */
  members: number;
  /** How long the senders post in each run; a run then waits until every member has every message. */
  sendSeconds: number;
  drainTimeoutMs: number;
  /** Posts message `seq` of run `tag` as `sender` (its token); answers the reply. */
  post(sender: string, tag: string, seq: number): Promise<Reply>;
  /** The status a posted message is answered with (201 for lobby messages, 200 for channel messages). */
  postedStatus: number;
  /** The run tag and message number a delivered dispatch carries, if it carries them. */
  identify(data: unknown): { tag: unknown; seq: unknown } | undefined;
}

/** One Hearth run: messages posted for `sendSeconds`, then until every member had every one. */
export interface ChatRun {
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

/**
 * An offered load instead of a closed loop: each sender posts `perSenderPerSecond` messages a second on a
 * fixed schedule (senders staggered evenly), whether or not its earlier posts were answered; a message's
 * latency then runs from its scheduled time, so a late bench or a slow answer counts against Hearth.
 */
export interface Pace {
  perSenderPerSecond: number;
}

/** A bare ws run: as many events as Hearth's last run sent, at once, to every client. */
export interface FanoutRun {
  messages: number;
  burst: Burst;
  /** The CPU the bare ws process used in the burst, seconds (undefined without /proc). */
  cpuSeconds: number | undefined;
}

/** One run's bookkeeping: when each message was posted, and which member received it when. */
interface Pending {
  /** Tells this run's messages from another's. */
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

/**
 * Lobby chat's plan (lobby-chat, lobby-cpu): `content` posted to `path` with the run and number in the
 * message's `metadata`, answered 201, recognized by that metadata in LOBBY_MESSAGE_CREATE.
 */
export function lobbyMessagesChat(options: {
  http: JsonClient;
  path: string;
  content: string;
  members: number;
  sendSeconds: number;
  drainTimeoutMs: number;
}): Chat {
  const { http, path, content, members, sendSeconds, drainTimeoutMs } = options;
  return new Chat({
    members,
    sendSeconds,
    drainTimeoutMs,
    postedStatus: 201,
    post: (token, tag, seq) =>
      http.send('POST', path, `Bearer ${token}`, { content, metadata: { run: tag, seq: String(seq) } }),
    identify: (data) => {
      const metadata = (data as { metadata?: { run?: unknown; seq?: unknown } } | null)?.metadata;
      return metadata && { tag: metadata.run, seq: metadata.seq };
    },
  });
}

/** Posts messages and matches each delivery to its message, run after run. */
export class Chat {
  readonly #plan: ChatPlan;
  #pending: Pending | undefined;
  #runs = 0;
  /** A delivery between runs: reported by the next run (throwing in a socket's handler would crash). */
  #stray: Error | undefined;

  constructor(plan: ChatPlan) {
    this.#plan = plan;
  }

  /** A member's session received one of the counted dispatches. */
  delivered(client: number, data: unknown, at: number): void {
    const pending = this.#pending;
    const id = this.#plan.identify(data);
    if (!pending || id?.tag !== pending.tag) {
      const stray = new Error(
        `member ${client} received a message of no current run: ${JSON.stringify(data)}`,
      );
      if (pending) pending.failure ??= stray;
      else this.#stray ??= stray;
      return;
    }
    const seq = Number(id.seq);
    const receivedBy = pending.receivedBy[seq];
    const postedAt = pending.postedAt[seq];
    if (receivedBy === undefined || postedAt === undefined) {
      pending.failure ??= new Error(`member ${client} received unknown message ${String(id.seq)}`);
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

  async run(fleet: Fleet, senders: readonly string[], pace?: Pace): Promise<ChatRun> {
    if (this.#stray) throw this.#stray;
    const plan = this.#plan;
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
      const deadline = started + plan.sendSeconds * 1000;
      /** Posts the next message, timed from `postedAt` (now, or the time it was scheduled for). */
      const post = async (token: string, postedAt: number) => {
        const seq = pending.postedAt.length;
        pending.receivedBy.push(new Uint8Array(plan.members));
        pending.postedAt.push(postedAt);
        const reply = await plan.post(token, pending.tag, seq);
        lastAnswer = performance.now();
        posts.push(lastAnswer - postedAt);
        if (reply.status !== plan.postedStatus) {
          // The other senders stop at their next message.
          pending.failure ??= new Error(
            `message ${seq} of run ${pending.tag}: the post answered ${reply.status}: ${reply.body.slice(0, 300)}`,
          );
          throw pending.failure;
        }
      };
      const closedLoop = async (token: string) => {
        while (performance.now() < deadline && !pending.failure) await post(token, performance.now());
      };
      const paced = async (token: string, index: number, perSecond: number) => {
        const interval = 1000 / perSecond;
        const posted: Promise<void>[] = [];
        for (let k = 0; !pending.failure; k++) {
          const at = started + (k + index / senders.length) * interval;
          if (at >= deadline) break;
          const wait = at - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          posted.push(post(token, at));
        }
        await Promise.all(posted);
      };
      await Promise.all(
        senders.map((token, index) =>
          pace ? paced(token, index, pace.perSenderPerSecond) : closedLoop(token),
        ),
      );
      const messages = pending.postedAt.length;
      pending.expected = messages * plan.members;
      if (pending.latencies.length === pending.expected) done();

      let timer: NodeJS.Timeout | undefined;
      const failed = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const missing = pending.expected! - pending.latencies.length;
          reject(
            pending.failure ??
              fleet.failure ??
              new Error(
                `Hearth: ${missing} of ${pending.expected} deliveries missing after the timeout ` +
                  `(${describeMissing(pending.receivedBy)})`,
              ),
          );
        }, plan.drainTimeoutMs);
      });
      try {
        await Promise.race([drained, failed]);
      } finally {
        clearTimeout(timer);
      }
      if (pending.failure) throw pending.failure;
      if (fleet.failure) throw fleet.failure;
      return {
        messages,
        sendSeconds: (lastAnswer - started) / 1000,
        posts: Float64Array.from(posts),
        deliveries: pending.latencies.length,
        deliverSeconds: (pending.lastDelivery - started) / 1000,
        latencies: Float64Array.from(pending.latencies),
      };
    } finally {
      this.#pending = undefined;
    }
  }
}

/** Which messages some member never received, and who: the first few, for the failure's message. */
function describeMissing(receivedBy: readonly Uint8Array[]): string {
  const lines: string[] = [];
  let messages = 0;
  receivedBy.forEach((members, seq) => {
    const absent: number[] = [];
    members.forEach((received, member) => {
      if (received === 0) absent.push(member);
    });
    if (absent.length === 0) return;
    messages++;
    if (lines.length < 5) {
      lines.push(
        `message ${seq} not received by ${absent.length} member(s): ${absent.slice(0, 10).join(', ')}`,
      );
    }
  });
  return `${messages} message(s) incomplete; ${lines.join('; ')}`;
}

/**
 * One warm-up run per side, then `rounds` per side in the order AB BA AB…: Hearth's chat, and bare ws
 * pushing as many events as Hearth's last run posted, in frames of the bytes Hearth sent (`eventName`).
 */
export async function alternateRuns(options: {
  chat: Chat;
  hearthFleet: Fleet;
  bareFleet: Fleet;
  bare: ServerProcess;
  senders: readonly string[];
  rounds: number;
  eventName: string;
  drainTimeoutMs: number;
  /** Names the chat side in progress lines; default Hearth (lobby-chat also runs its minimal baseline). */
  label?: string;
}): Promise<{ chats: ChatRun[]; fanouts: FanoutRun[] }> {
  const { chat, hearthFleet, bareFleet, bare, senders, eventName, drainTimeoutMs: timeoutMs } = options;
  const label = options.label ?? 'Hearth';
  const chats: ChatRun[] = [];
  const fanouts: FanoutRun[] = [];
  const members = bareFleet.size;
  /** How many messages Hearth's last run (the warm-up too) sent: the size of the next bare run. */
  let lastMessages = 0;
  const hearthRun = async (what: string) => {
    collectGarbage();
    const run = await chat.run(hearthFleet, senders);
    chats.push(run);
    lastMessages = run.messages;
    progress(
      `  ${what} ${label}: ${Math.round(run.messages / run.sendSeconds)} messages/s, ` +
        `${Math.round(run.deliveries / run.deliverSeconds)} deliveries/s ` +
        `(${run.messages} messages, ${run.deliveries} deliveries in ${run.deliverSeconds.toFixed(2)} s)`,
    );
  };
  const bareRun = async (what: string) => {
    const messages = lastMessages;
    const payload = hearthFleet.sample;
    if (payload === undefined) throw new Error(`${label} delivered no ${eventName} to sample`);
    // Sampled again each burst: the same clients may push another server's frames in a later comparison.
    bareFleet.sample = undefined;
    collectGarbage();
    const cpuBefore = bare.cpuSeconds();
    const burst = await bareFleet.burst(
      messages,
      () => publishTo(bare, { cmd: 'publish', count: messages, payload }, members, timeoutMs),
      timeoutMs,
    );
    if (bareFleet.sample !== payload) throw new Error('bare ws delivered other bytes than it was given');
    const cpuAfter = bare.cpuSeconds();
    fanouts.push({
      messages,
      burst,
      cpuSeconds: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
    });
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
  for (let i = 0; i < options.rounds; i++) {
    const order = i % 2 === 0 ? [bareRun, hearthRun] : [hearthRun, bareRun];
    for (const side of order) await side(`round ${i + 1}/${options.rounds}`);
  }
  return { chats, fanouts };
}

/** A chat server in a two-server comparison: its chat, its members' sessions, and its process. */
export interface ChatSide {
  label: string;
  chat: Chat;
  fleet: Fleet;
  server: ServerProcess;
}

/** A run of one side, with the CPU its server process used in it (seconds; undefined without /proc). */
export interface MeasuredChatRun extends ChatRun {
  cpuSeconds: number | undefined;
}

/**
 * Two chat servers posted to by the same senders' tokens, each with its own chat and sessions: one warm-up
 * run per side, then `rounds` per side in the order AB BA AB…; each run with its server's CPU time. Closed
 * loops, or at the offered rate `pace`.
 */
export async function alternateChats(options: {
  first: ChatSide;
  second: ChatSide;
  senders: readonly string[];
  rounds: number;
  pace?: Pace;
}): Promise<[MeasuredChatRun[], MeasuredChatRun[]]> {
  const { first, second, senders, pace } = options;
  const runs = new Map<ChatSide, MeasuredChatRun[]>([
    [first, []],
    [second, []],
  ]);
  const measure = async (side: ChatSide, what: string) => {
    side.server.assertAlive();
    collectGarbage();
    const cpuBefore = side.server.cpuSeconds();
    const run = await side.chat.run(side.fleet, senders, pace);
    const cpuAfter = side.server.cpuSeconds();
    const cpuSeconds = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
    runs.get(side)!.push({ ...run, cpuSeconds });
    const latency = latencyFigures([run.latencies]);
    progress(
      `  ${what} ${side.label}: ${Math.round(run.messages / run.sendSeconds)} messages/s, ` +
        `${Math.round(run.deliveries / run.deliverSeconds)} deliveries/s ` +
        `(${run.messages} messages, ${run.deliveries} deliveries in ${run.deliverSeconds.toFixed(2)} s` +
        (pace
          ? `; p50 ${latency.latencyP50Ms.toFixed(2)} ms, p99 ${latency.latencyP99Ms.toFixed(2)} ms`
          : '') +
        (cpuSeconds === undefined ? ')' : `, ${((cpuSeconds * 1e6) / run.messages).toFixed(0)} µs CPU each)`),
    );
  };
  await measure(first, 'warm-up');
  await measure(second, 'warm-up');
  for (const list of runs.values()) list.length = 0;
  for (let i = 0; i < options.rounds; i++) {
    const order = i % 2 === 0 ? [second, first] : [first, second];
    for (const side of order) await measure(side, `round ${i + 1}/${options.rounds}`);
  }
  return [runs.get(first)!, runs.get(second)!];
}

/** The server's CPU per message (posted, or pushed by bare ws), µs: the median over runs (undefined if a run has no figure). */
export function cpuPerMessageUs(
  runs: readonly { messages: number; cpuSeconds: number | undefined }[],
): number | undefined {
  const each = runs.flatMap((run) =>
    run.cpuSeconds === undefined ? [] : [(run.cpuSeconds * 1e6) / run.messages],
  );
  return each.length === runs.length ? median(each) : undefined;
}

export function sentFigures(chats: readonly ChatRun[], fanouts: readonly FanoutRun[]) {
  const bareRates = fanouts.map((f) => f.messages / f.burst.seconds);
  const baseline: Figures = { label: 'bare ws 8', throughput: median(bareRates), rounds: bareRates };
  return { baseline, hearth: chatSent('Hearth', chats) };
}

/** One chat server's messages/s over its runs, with the POST round trip as latency (medians). */
export function chatSent(label: string, chats: readonly ChatRun[]): Figures {
  const rates = chats.map((c) => c.messages / c.sendSeconds);
  return { label, throughput: median(rates), ...latencyFigures(chats.map((c) => c.posts)), rounds: rates };
}

export function deliveredFigures(chats: readonly ChatRun[], fanouts: readonly FanoutRun[]) {
  const bareRates = fanouts.map((f) => f.burst.latencies.length / f.burst.seconds);
  const baseline: Figures = {
    label: 'bare ws 8',
    throughput: median(bareRates),
    ...latencyFigures(fanouts.map((f) => f.burst.latencies)),
    rounds: bareRates,
  };
  return { baseline, hearth: chatDelivered('Hearth', chats) };
}

/** One chat server's deliveries/s and send→delivery latencies over its runs (medians). */
export function chatDelivered(label: string, chats: readonly ChatRun[]): Figures {
  const rates = chats.map((c) => c.deliveries / c.deliverSeconds);
  return {
    label,
    throughput: median(rates),
    ...latencyFigures(chats.map((c) => c.latencies)),
    rounds: rates,
  };
}

/** The median over runs of each run's p50 and p99. */
function latencyFigures(runs: readonly Float64Array[]): { latencyP50Ms: number; latencyP99Ms: number } {
  const sorted = runs.map((samples) => Float64Array.from(samples).sort());
  return {
    latencyP50Ms: median(sorted.map((s) => percentile(s, 0.5))),
    latencyP99Ms: median(sorted.map((s) => percentile(s, 0.99))),
  };
}
