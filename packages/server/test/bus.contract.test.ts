import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  postgresAvailable,
  postgresSchema,
  REDIS_URL,
  redisAvailable,
  redisPrefix,
} from '../../../test-support/services.js';
import { until } from '../../../test-support/wait.js';
import { type Bus, type BusEvent, compareEventIds, type DeliveredEvent, MemoryBus } from '../src/bus/bus.js';
import { DatabaseBus, type DatabaseBusOptions } from '../src/bus/database-bus.js';
import { BUS_STREAM, RedisStreamsBus, type RedisStreamsBusOptions } from '../src/bus/redis-bus.js';
import { connectRedis } from '../src/redis.js';
import { openStorage, type Storage } from '../src/storage/database.js';

/**
 * One contract for every bus (STYLE.md rules 6–7): MemoryBus and RedisStreamsBus deliver alike. The
 * Redis part adds what only many nodes have: three buses on three connections, killed connections.
 */
const redisUp = await redisAvailable();
const postgresUp = await postgresAvailable();

interface Reported {
  error: unknown;
  event: DeliveredEvent | undefined;
}

interface BusUnderTest {
  name: string;
  available: boolean;
  /** A fresh bus (one node) that reports listener errors into `reported`. */
  open(reported: Reported[]): Promise<Bus>;
  /** Closes what `open` made and deletes its keys. */
  cleanup(): Promise<void>;
}

/** Records what one listener receives; `until` resolves as soon as the events satisfy a condition. */
class Recorder {
  readonly events: DeliveredEvent[] = [];
  readonly unsubscribe: () => void;
  readonly #waiters = new Set<{ test: (events: DeliveredEvent[]) => boolean; resolve: () => void }>();

  constructor(bus: Bus) {
    this.unsubscribe = bus.subscribe((event) => {
      this.events.push(event);
      for (const waiter of this.#waiters) {
        if (waiter.test(this.events)) {
          this.#waiters.delete(waiter);
          waiter.resolve();
        }
      }
    });
  }

  async until(test: (events: DeliveredEvent[]) => boolean): Promise<DeliveredEvent[]> {
    if (!test(this.events)) await new Promise<void>((resolve) => this.#waiters.add({ test, resolve }));
    return this.events;
  }

  /** The events of `type` received so far. */
  of(type: string): DeliveredEvent[] {
    return this.events.filter((event) => event.type === type);
  }
}

/**
 * Publishes a marker and waits until every recorder has it. A node delivers in stream order, so
 * anything published before the marker, duplicates included, has arrived by then.
 */
async function fence(publisher: Bus, recorders: Recorder[]): Promise<void> {
  const marker = randomBytes(4).toString('hex');
  await publisher.publish({ type: 'FENCE', data: { marker } });
  await Promise.all(
    recorders.map((recorder) =>
      recorder.until((events) => events.some((e) => e.type === 'FENCE' && e.data['marker'] === marker)),
    ),
  );
}

const withoutFences = (events: DeliveredEvent[]) => events.filter((event) => event.type !== 'FENCE');

function expectIncreasingIds(events: DeliveredEvent[]): void {
  for (let i = 1; i < events.length; i++) {
    expect(compareEventIds(events[i - 1]!.id, events[i]!.id), `${events[i - 1]!.id} < ${events[i]!.id}`).toBe(
      -1,
    );
  }
}

/** Waits for a condition by a bounded poll: for things no event announces (a server-side client list). */
async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Deletes every key under `keyPrefix`; SCAN patterns are not prefixed by ioredis, so use a bare connection. */
async function deleteKeys(keyPrefix: string): Promise<void> {
  const redis = await connectRedis(REDIS_URL, '');
  try {
    for await (const keys of redis.scanStream({ match: `${keyPrefix}*`, count: 1000 })) {
      const batch = keys as string[];
      if (batch.length > 0) await redis.del(...batch);
    }
  } finally {
    await redis.quit();
  }
}

/**
 * One deployment on Redis: its own key prefix, connections the test owns (as app.ts owns its one), and
 * nodes whose reads block for ten minutes, so a close that waited for the BLOCK timeout would hang.
 */
function redisDeployment() {
  const prefix = redisPrefix();
  const connections: Redis[] = [];
  const buses: RedisStreamsBus[] = [];
  return {
    prefix,
    async connection(): Promise<Redis> {
      const redis = await connectRedis(REDIS_URL, prefix);
      connections.push(redis);
      return redis;
    },
    async node(options: RedisStreamsBusOptions & { redis?: Redis } = {}): Promise<RedisStreamsBus> {
      const { redis, ...busOptions } = options;
      const bus = await RedisStreamsBus.open(redis ?? (await this.connection()), {
        blockMs: 600_000,
        ...busOptions,
      });
      buses.push(bus);
      return bus;
    },
    async cleanup(): Promise<void> {
      await Promise.all(buses.splice(0).map((bus) => bus.close()));
      await Promise.all(connections.splice(0).map((redis) => redis.quit()));
      await deleteKeys(prefix);
    },
  };
}

const memory: BusUnderTest = {
  name: 'MemoryBus',
  available: true,
  open: async (reported) => new MemoryBus({ onError: (error, event) => reported.push({ error, event }) }),
  cleanup: async () => {},
};

const redisContractRun = redisDeployment();
const redis: BusUnderTest = {
  name: 'RedisStreamsBus',
  available: redisUp,
  open: (reported) => redisContractRun.node({ onError: (error, event) => reported.push({ error, event }) }),
  cleanup: () => redisContractRun.cleanup(),
};

/**
 * One deployment on a database: every node opens its own connection to the same database, as a server and
 * a `hearth` command do, and polls every 5 ms (the poll is what carries another node's events).
 */
function databaseDeployment(engine: 'SQLite file' | 'PostgreSQL') {
  let url: string | undefined;
  let drop = async () => {};
  const storages: Storage[] = [];
  const buses: DatabaseBus[] = [];
  /** One migration per database: nodes opened together would otherwise race to create the tables. */
  let migrated: Promise<unknown> | undefined;
  let opening: Promise<unknown> = Promise.resolve();
  function database(): string {
    if (url) return url;
    if (engine === 'PostgreSQL') {
      const schema = postgresSchema();
      drop = schema.drop;
      url = schema.url;
    } else {
      const directory = mkdtempSync(join(tmpdir(), 'hearth-bus-'));
      drop = async () => rmSync(directory, { recursive: true, force: true });
      url = `sqlite:${join(directory, 'hearth.sqlite')}`;
    }
    return url;
  }
  return {
    async storage(): Promise<Storage> {
      // One at a time: PostgreSQL's CREATE SCHEMA IF NOT EXISTS races with itself.
      const opened = opening.then(() => openStorage(database()));
      opening = opened.catch(() => undefined);
      const storage = await opened;
      storages.push(storage);
      migrated ??= storage.migrate();
      await migrated;
      return storage;
    },
    async node(options: DatabaseBusOptions & { storage?: Storage } = {}): Promise<DatabaseBus> {
      const { storage, ...busOptions } = options;
      const bus = await DatabaseBus.open(storage ?? (await this.storage()), { pollMs: 5, ...busOptions });
      buses.push(bus);
      return bus;
    },
    /** Closes the nodes and connections; the database stays until `drop`. */
    async close(): Promise<void> {
      await Promise.all(buses.splice(0).map((bus) => bus.close()));
      await Promise.all(storages.splice(0).map((storage) => storage.close()));
    },
    async drop(): Promise<void> {
      await this.close();
      await drop();
      url = undefined;
      migrated = undefined;
    },
  };
}

const databaseRuns = {
  sqlite: databaseDeployment('SQLite file'),
  postgres: databaseDeployment('PostgreSQL'),
};
const databaseBuses: BusUnderTest[] = [
  { name: 'DatabaseBus (SQLite file)', available: true, run: databaseRuns.sqlite },
  { name: 'DatabaseBus (PostgreSQL)', available: postgresUp, run: databaseRuns.postgres },
].map(({ name, available, run }) => ({
  name,
  available,
  open: (reported) => run.node({ onError: (error, event) => reported.push({ error, event }) }),
  cleanup: () => run.drop(),
}));

function busContract(underTest: BusUnderTest): void {
  describe.skipIf(!underTest.available)(`bus contract: ${underTest.name}`, () => {
    const opened: Bus[] = [];
    let reported: Reported[] = [];

    async function open(): Promise<Bus> {
      reported = [];
      const bus = await underTest.open(reported);
      opened.push(bus);
      return bus;
    }

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((bus) => bus.close()));
    });
    afterAll(() => underTest.cleanup());

    it('a subscriber receives a published event with type, data and audience intact, and an id', async () => {
      const bus = await open();
      const recorder = new Recorder(bus);
      const dispatch: BusEvent = {
        type: 'LOBBY_MESSAGE_CREATE',
        data: {
          lobby_id: '1300000000000000001',
          content: 'gg',
          metadata: { nested: [1, 'two', null, true] },
        },
        audience: {
          users: ['1300000000000000002', '1300000000000000003'],
          applicationId: '1300000000000000004',
        },
      };
      const internal: BusEvent = { type: 'APPLICATION_DEAUTHORIZED', data: { application_id: '9' } };
      await bus.publish(dispatch);
      await bus.publish(internal);
      const [first, second] = await recorder.until((events) => events.length === 2);
      expect(first).toEqual({ ...dispatch, id: expect.stringMatching(/^\d+-\d+$/) });
      expect(second).toEqual({ ...internal, id: expect.stringMatching(/^\d+-\d+$/) });
      expect(second).not.toHaveProperty('audience');
    });

    it('events arrive in publish order, awaited or not, and their ids increase (compareEventIds)', async () => {
      const bus = await open();
      const recorder = new Recorder(bus);
      for (let i = 0; i < 10; i++) await bus.publish({ type: 'ORDERED', data: { i } });
      await Promise.all(
        Array.from({ length: 20 }, (_, j) => bus.publish({ type: 'ORDERED', data: { i: 10 + j } })),
      );
      const events = await recorder.until((received) => received.length === 30);
      expect(events.map((event) => event.data['i'])).toEqual(Array.from({ length: 30 }, (_, i) => i));
      expectIncreasingIds(events);
    });

    it('afterDelivery follows every run of deliveries, and a local publish settles only after its run ended', async () => {
      const bus = await open();
      const log: Array<number | 'end'> = [];
      bus.subscribe((event) => log.push(event.data['i'] as number), { afterDelivery: () => log.push('end') });
      const settledAfter: Array<number | 'end' | undefined> = [];
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          bus.publish({ type: 'RUN', data: { i } }).then(() => settledAfter.push(log.at(-1))),
        ),
      );
      await until(
        () => log.filter((entry) => entry !== 'end').length === 8 && log.at(-1) === 'end',
        'every event delivered and its run ended',
      );
      expect(log.filter((entry) => entry !== 'end')).toEqual(Array.from({ length: 8 }, (_, i) => i));
      // No run is empty, and none is left open.
      expect(log[0]).not.toBe('end');
      for (let i = 1; i < log.length; i++) expect(log[i] === 'end' && log[i - 1] === 'end').toBe(false);
      // Redis settles a publish on its XADD, before its reader delivers; the others deliver their own first.
      if (!underTest.name.startsWith('Redis'))
        expect(settledAfter.every((last) => last === 'end')).toBe(true);
    });

    it('two subscribers each receive every event once, with the same ids', async () => {
      const bus = await open();
      const one = new Recorder(bus);
      const two = new Recorder(bus);
      await Promise.all(Array.from({ length: 10 }, (_, i) => bus.publish({ type: 'BOTH', data: { i } })));
      await fence(bus, [one, two]);
      expect(one.of('BOTH').map((event) => event.data['i'])).toEqual(Array.from({ length: 10 }, (_, i) => i));
      expect(two.events).toEqual(one.events);
    });

    it('the same function subscribed twice is two subscriptions; unsubscribing one stops only it', async () => {
      const bus = await open();
      const calls: string[] = [];
      const listener = (event: DeliveredEvent) => calls.push(event.type);
      const first = bus.subscribe(listener);
      bus.subscribe(listener);
      const witness = new Recorder(bus);
      await bus.publish({ type: 'TWICE', data: {} });
      await witness.until((events) => events.length === 1);
      first();
      await bus.publish({ type: 'ONCE', data: {} });
      await witness.until((events) => events.length === 2);
      expect(calls).toEqual(['TWICE', 'TWICE', 'ONCE']);
    });

    it('unsubscribe stops delivery to that listener; the others keep receiving', async () => {
      const bus = await open();
      const leaving = new Recorder(bus);
      const staying = new Recorder(bus);
      await bus.publish({ type: 'BEFORE', data: {} });
      await Promise.all([leaving, staying].map((r) => r.until((events) => events.length === 1)));
      leaving.unsubscribe();
      await bus.publish({ type: 'AFTER', data: {} });
      await fence(bus, [staying]);
      expect(leaving.events.map((event) => event.type)).toEqual(['BEFORE']);
      expect(withoutFences(staying.events).map((event) => event.type)).toEqual(['BEFORE', 'AFTER']);
    });

    it('a throwing listener stops neither later events nor other listeners; its error is reported with the event', async () => {
      const bus = await open();
      const failure = new Error('listener bug');
      let thrown = 0;
      bus.subscribe(() => {
        thrown++;
        throw failure;
      });
      const other = new Recorder(bus);
      for (let i = 0; i < 5; i++) await bus.publish({ type: 'SURVIVES', data: { i } });
      await fence(bus, [other]);
      expect(other.of('SURVIVES').map((event) => event.data['i'])).toEqual([0, 1, 2, 3, 4]);
      expect(thrown).toBe(6);
      expect(reported).toEqual(other.events.map((event) => ({ error: failure, event })));
    });

    it('close() resolves promptly, even while a read waits for entries, and removes every listener', async () => {
      const bus = await open();
      const recorder = new Recorder(bus);
      await bus.publish({ type: 'LAST', data: {} });
      await recorder.until((events) => events.length === 1);
      await bus.close();
      await bus.close();
      expect(recorder.events.map((event) => event.type)).toEqual(['LAST']);
    });
  });
}

describe('compareEventIds', () => {
  it('orders by milliseconds, then by sequence, as numbers rather than as text', () => {
    expect(compareEventIds('1700000000000-0', '1700000000000-0')).toBe(0);
    expect(compareEventIds('1700000000000-9', '1700000000000-10')).toBe(-1);
    expect(compareEventIds('1700000000001-0', '1700000000000-99')).toBe(1);
    expect(compareEventIds('999-5', '1000-0')).toBe(-1);
    expect(compareEventIds('18446744073709551615-1', '18446744073709551615-0')).toBe(1);
  });

  it('rejects what is not an id of the form <ms>-<seq>', () => {
    expect(() => compareEventIds('abc', '1-0')).toThrow(TypeError);
    expect(() => compareEventIds('1-0', '1')).toThrow(TypeError);
  });

  it('MemoryBus ids are <ms>-<seq> and increase within one millisecond', async () => {
    const bus = new MemoryBus();
    const recorder = new Recorder(bus);
    for (let i = 0; i < 100; i++) await bus.publish({ type: 'BURST', data: {} });
    expect(recorder.events.every((event) => /^\d+-\d+$/.test(event.id))).toBe(true);
    expectIncreasingIds(recorder.events);
  });

  it('a MemoryBus without history keeps no event, and still names the last one', async () => {
    const kept = new MemoryBus();
    const lone = new MemoryBus({ history: false });
    for (const bus of [kept, lone]) {
      const recorder = new Recorder(bus);
      for (let i = 0; i < 3; i++) await bus.publish({ type: 'EVENT', data: { i } });
      expect(bus.lastId()).toBe(recorder.events.at(-1)?.id);
    }
    expect((await kept.history('0-0')).map((event) => event.data)).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    await expect(lone.history('0-0')).rejects.toThrow(/keeps no history/);
  });
});

for (const underTest of [memory, redis, ...databaseBuses]) busContract(underTest);

for (const [engine, available] of [
  ['SQLite file', true],
  ['PostgreSQL', postgresUp],
] as const) {
  describe.skipIf(!available)(`DatabaseBus across nodes (${engine})`, () => {
    const deployment = databaseDeployment(engine);
    afterEach(() => deployment.close());
    afterAll(() => deployment.drop());

    async function threeNodes(): Promise<{ nodes: DatabaseBus[]; recorders: Recorder[] }> {
      const nodes = await Promise.all([0, 1, 2].map(() => deployment.node()));
      return { nodes, recorders: nodes.map((node) => new Recorder(node)) };
    }

    it('an event published on any of three nodes (each on its own connection) reaches every node exactly once, in one order everywhere', async () => {
      const { nodes, recorders } = await threeNodes();
      await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          nodes[i % 3]!.publish({ type: 'FANOUT', data: { i, from: i % 3 } }),
        ),
      );
      await fence(nodes[0]!, recorders);
      await fence(nodes[2]!, recorders);
      const sequences = recorders.map((recorder) => withoutFences(recorder.events));
      for (const sequence of sequences) {
        expect(sequence).toEqual(sequences[0]);
        expectIncreasingIds(sequence);
      }
      const seen = sequences[0]!.map((event) => event.data['i'] as number);
      expect([...seen].sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, i) => i));
      for (const from of [0, 1, 2]) {
        const own = sequences[0]!.filter((event) => event.data['from'] === from).map((e) => e.data['i']);
        expect(own, `node ${from}'s events keep its publish order`).toEqual(
          Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 3 === from),
        );
      }
    });

    it("a node's own event is delivered to it by publish itself, after every earlier row of other nodes", async () => {
      // Node b never polls: only its own publish can bring a's rows and its own.
      const a = await deployment.node();
      const b = await deployment.node({ pollMs: 3_600_000 });
      const onB = new Recorder(b);
      await a.publish({ type: 'FROM_A', data: { n: 1 } });
      await a.publish({ type: 'FROM_A', data: { n: 2 } });
      expect(onB.events).toEqual([]);
      await b.publish({ type: 'FROM_B', data: {} });
      expect(onB.events.map((event) => event.type)).toEqual(['FROM_A', 'FROM_A', 'FROM_B']);
      await b.publish({ type: 'FROM_B', data: {} });
      expect(onB.events).toHaveLength(4);
      expectIncreasingIds(onB.events);
    });

    it('publishes made at once, more than one append can hold, each resolve once their node delivered the event, and every node has them in call order', async () => {
      // Seven rows an append: the 40 publishes go in several appends, made while earlier ones commit.
      const a = await deployment.node({ batchSize: 7 });
      const b = await deployment.node();
      const [onA, onB] = [new Recorder(a), new Recorder(b)];
      const numbers = Array.from({ length: 40 }, (_, i) => i);
      const deliveredAtResolve = await Promise.all(
        numbers.map((i) =>
          a
            .publish({ type: 'BURST', data: { i } })
            .then(() => onA.of('BURST').some((event) => event.data['i'] === i)),
        ),
      );
      expect(deliveredAtResolve.every(Boolean)).toBe(true);
      await fence(a, [onA, onB]);
      for (const recorder of [onA, onB]) {
        expect(recorder.of('BURST').map((event) => event.data['i'])).toEqual(numbers);
        expectIncreasingIds(recorder.events);
      }
    });

    it("a node starts at the log's end: it gets what is appended after it is open, not what came before", async () => {
      const early = await deployment.node();
      const earlyRecorder = new Recorder(early);
      await early.publish({ type: 'BEFORE', data: {} });
      const late = await deployment.node();
      const lateRecorder = new Recorder(late);
      await early.publish({ type: 'AFTER', data: {} });
      await fence(early, [earlyRecorder, lateRecorder]);
      expect(withoutFences(lateRecorder.events).map((event) => event.type)).toEqual(['AFTER']);
    });

    it('history(afterId) answers the retained events after that id, in order, with the ids delivered', async () => {
      const node = await deployment.node();
      const recorder = new Recorder(node);
      for (let i = 0; i < 5; i++) await node.publish({ type: 'KEPT', data: { i } });
      const [, second] = recorder.events;
      const other = await deployment.node();
      expect(await other.history(second!.id)).toEqual(recorder.events.slice(2));
      await expect(other.history('not an id')).rejects.toThrow(TypeError);
    });

    it('trimming keeps the newest rows, in DELETEs of a few rows each, and ids keep increasing after the log was trimmed to one row', async () => {
      const storage = await deployment.storage();
      const node = await deployment.node({ storage, retain: 1, trimEveryMs: 0, trimBatchSize: 3 });
      const recorder = new Recorder(node);
      for (let i = 0; i < 20; i++) await node.publish({ type: 'TRIMMED', data: { i } });
      await fence(node, [recorder]);
      // A poll after the fence has trimmed: wait for the log to hold one row.
      await waitFor('the trim', async () => {
        const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM event_log`.execute(
          storage.db,
        );
        return Number(rows[0]?.n) === 1 ? true : undefined;
      });
      const next = await deployment.node();
      const nextRecorder = new Recorder(next);
      await next.publish({ type: 'AFTER_TRIM', data: {} });
      await fence(node, [recorder, nextRecorder]);
      expectIncreasingIds(recorder.events);
      expect(withoutFences(nextRecorder.events).map((event) => event.type)).toEqual(['AFTER_TRIM']);
    });

    it('a row that is not a Hearth event is reported and skipped; later events still arrive', async () => {
      const storage = await deployment.storage();
      const reported: Reported[] = [];
      const node = await deployment.node({ onError: (error, event) => reported.push({ error, event }) });
      const recorder = new Recorder(node);
      await sql`INSERT INTO event_log (ms, event) VALUES (${Date.now()}, ${'not json'})`.execute(storage.db);
      await fence(node, [recorder]);
      expect(recorder.events.map((event) => event.type)).toEqual(['FENCE']);
      expect(reported).toHaveLength(1);
      expect(String(reported[0]?.error)).toMatch(/is not a Hearth event; skipped/);
    });

    it('two connections appending bursts at once: every node has every event once, ids and their ms in one increasing order, each publisher in call order', async () => {
      // Small appends from two storages race for the log; a third node only reads.
      const [a, b] = await Promise.all([
        deployment.node({ batchSize: 7 }),
        deployment.node({ batchSize: 5 }),
      ]);
      const reader = await deployment.node({ pollMs: 1 });
      const recorders = [a, b, reader].map((node) => new Recorder(node));
      const burst = (node: DatabaseBus, from: string, round: number) =>
        Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            node.publish({ type: 'RACE', data: { from, n: round * 20 + i } }),
          ),
        );
      for (let round = 0; round < 10; round++)
        await Promise.all([burst(a, 'a', round), burst(b, 'b', round)]);
      await fence(a, recorders);
      await fence(b, recorders);
      const sequences = recorders.map((recorder) => recorder.of('RACE'));
      for (const sequence of sequences) {
        expect(sequence).toEqual(sequences[0]);
        expectIncreasingIds(sequence);
        const ms = sequence.map((event) => Number(event.id.split('-')[0]));
        expect(ms).toEqual([...ms].sort((x, y) => x - y));
      }
      for (const from of ['a', 'b']) {
        expect(
          sequences[0]!.filter((event) => event.data['from'] === from).map((event) => event.data['n']),
        ).toEqual(Array.from({ length: 200 }, (_, i) => i));
      }
    });

    // SQLite has one writer at a time: no transaction can hold a row back there.
    if (engine === 'PostgreSQL')
      it('an append waits for a row another transaction inserted before it to commit, so that no node passes over that row', async () => {
        const storage = await deployment.storage();
        const node = await deployment.node();
        const recorder = new Recorder(node);
        let commit = () => {};
        const committing = new Promise<void>((resolve) => {
          commit = resolve;
        });
        let inserted = () => {};
        const insertedRow = new Promise<void>((resolve) => {
          inserted = resolve;
        });
        // Takes the row number before the append does, and commits only once the append had time to finish.
        const writer = storage.transaction(async (tx) => {
          await sql`INSERT INTO event_log (ms, event)
            VALUES (${Date.now()}, ${JSON.stringify({ type: 'EARLIER', data: {} })})`.execute(tx);
          inserted();
          await committing;
        });
        await insertedRow;
        let appended = false;
        const publishing = node.publish({ type: 'LATER', data: {} }).then(() => {
          appended = true;
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(appended, 'the append went ahead of a row not yet committed').toBe(false);
        commit();
        await writer;
        await publishing;
        await fence(node, [recorder]);
        expect(withoutFences(recorder.events).map((event) => event.type)).toEqual(['EARLIER', 'LATER']);
        expectIncreasingIds(recorder.events);
      });

    it('event text with quotes, backslashes, braces, commas, NULL, line breaks and non-ASCII arrives intact', async () => {
      const [a, b] = await Promise.all([deployment.node(), deployment.node()]);
      const onB = new Recorder(b);
      const awkward = [
        '"quoted"',
        'back\\slash',
        '{a,b}',
        'NULL',
        'é 😀 \u0001',
        '',
        ' spaced ',
        'two\nlines\r\n',
        '\u0000 \ud800',
      ];
      await Promise.all(awkward.map((text) => a.publish({ type: 'AWKWARD', data: { text } })));
      await fence(a, [onB]);
      expect(onB.of('AWKWARD').map((event) => event.data['text'])).toEqual(awkward);
    });

    it('close() lets an append under way land in the log, and delivers nothing more', async () => {
      const closing = await deployment.node();
      const witness = await deployment.node();
      const closingRecorder = new Recorder(closing);
      const witnessRecorder = new Recorder(witness);
      const publishing = closing.publish({ type: 'LAST_WORDS', data: {} });
      await closing.close();
      await publishing;
      await fence(witness, [witnessRecorder]);
      expect(witnessRecorder.of('LAST_WORDS')).toHaveLength(1);
      expect(closingRecorder.events).toEqual([]);
    });
  });
}

describe.skipIf(!redisUp)('RedisStreamsBus across nodes', () => {
  const deployment = redisDeployment();
  const run = randomBytes(3).toString('hex');
  let admin: Redis;
  let nodes: RedisStreamsBus[];
  let recorders: Recorder[];

  /** The server-side id of a node's reader connection, found by the name the bus gives it. */
  async function readerClientId(name: string): Promise<string | undefined> {
    const list = String(await admin.client('LIST'));
    for (const line of list.split('\n')) {
      const fields = new Map(line.split(' ').map((pair) => pair.split('=', 2) as [string, string]));
      if (fields.get('name') === `hearth:bus:${name}`) return fields.get('id');
    }
    return undefined;
  }

  async function killReader(name: string): Promise<number> {
    const id = await waitFor(`reader ${name}`, () => readerClientId(name));
    return Number(await admin.client('KILL', 'ID', id));
  }

  beforeAll(async () => {
    admin = await connectRedis(REDIS_URL, '');
  });
  afterEach(() => deployment.cleanup());
  afterAll(async () => {
    await deployment.cleanup();
    await admin?.quit();
  });

  /** Three nodes, each on its own connection, each with one recorder. */
  async function threeNodes(): Promise<void> {
    nodes = await Promise.all(['a', 'b', 'c'].map((node) => deployment.node({ name: `${run}-${node}` })));
    recorders = nodes.map((node) => new Recorder(node));
  }

  it('an event published on any of three nodes reaches every node exactly once, in one order everywhere', async () => {
    await threeNodes();
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        nodes[i % 3]!.publish({ type: 'FANOUT', data: { i, from: i % 3 } }),
      ),
    );
    await fence(nodes[0]!, recorders);
    const sequences = recorders.map((recorder) => withoutFences(recorder.events));
    for (const sequence of sequences) {
      expect(sequence).toEqual(sequences[0]);
      expectIncreasingIds(sequence);
    }
    const seen = sequences[0]!.map((event) => event.data['i'] as number);
    expect([...seen].sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    for (const from of [0, 1, 2]) {
      const own = sequences[0]!
        .filter((event) => event.data['from'] === from)
        .map((event) => event.data['i']);
      expect(own, `node ${from}'s events keep its publish order`).toEqual(
        Array.from({ length: 50 }, (_, i) => i).filter((i) => i % 3 === from),
      );
    }
  });

  it("a node whose reader is killed mid-stream loses nothing: other nodes' events published meanwhile arrive after it reconnects, exactly once", async () => {
    await threeNodes();
    const [a, b] = nodes as [RedisStreamsBus, RedisStreamsBus, RedisStreamsBus];
    let roundsPublishedWhileDown = 0;
    for (let round = 0; round < 5; round++) {
      expect(await killReader(`${run}-c`), `round ${round}: node c's reader was connected`).toBe(1);
      await Promise.all(
        Array.from({ length: 10 }, (_, j) => (j % 2 ? b : a).publish({ type: 'BLIP', data: { round, j } })),
      );
      if ((await readerClientId(`${run}-c`)) === undefined) roundsPublishedWhileDown++;
      await Promise.all(
        recorders.map((recorder) =>
          recorder.until((events) => events.filter((e) => e.data['round'] === round).length >= 10),
        ),
      );
    }
    await fence(a, recorders);
    const [onA, onB, onC] = recorders.map((recorder) => withoutFences(recorder.events));
    expect(onA).toHaveLength(50);
    expect(onB).toEqual(onA);
    expect(onC).toEqual(onA);
    // Guards the test itself: ioredis waits 50 ms before reconnecting, so some round fell in the gap.
    expect(roundsPublishedWhileDown).toBeGreaterThan(0);
  });

  it('a node whose reader connection is closed for good reconnects itself and reads on from its last delivered id', async () => {
    const reported: Reported[] = [];
    const [a, b] = await Promise.all(['a', 'b'].map((n) => deployment.node({ name: `${run}-${n}` })));
    const c = await deployment.node({
      name: `${run}-c`,
      onError: (error, event) => reported.push({ error, event }),
    });
    nodes = [a!, b!, c];
    recorders = nodes.map((node) => new Recorder(node));
    await a!.publish({ type: 'DROP', data: { j: -1 } });
    await Promise.all(recorders.map((recorder) => recorder.until((events) => events.length === 1)));
    c.dropReaderConnection();
    await Promise.all(
      Array.from({ length: 10 }, (_, j) => (j % 2 ? b! : a!).publish({ type: 'DROP', data: { j } })),
    );
    await fence(a!, recorders);
    const [onA, onB, onC] = recorders.map((recorder) => withoutFences(recorder.events));
    expect(onA).toHaveLength(11);
    expect(onB).toEqual(onA);
    expect(onC).toEqual(onA);
    expect(reported.length).toBeGreaterThan(0);
    expect(reported.every(({ event }) => event === undefined)).toBe(true);
  });

  it('a publish made while the publishing connection is reconnecting waits for it and is delivered everywhere', async () => {
    const connection = await deployment.connection();
    const a = await deployment.node({ redis: connection, name: `${run}-a` });
    nodes = [a, ...(await Promise.all(['b', 'c'].map((n) => deployment.node({ name: `${run}-${n}` }))))];
    recorders = nodes.map((node) => new Recorder(node));
    const reconnecting = once(connection, 'reconnecting');
    expect(Number(await admin.client('KILL', 'ID', await connection.client('ID')))).toBe(1);
    await reconnecting;
    expect(connection.status).toBe('reconnecting');
    await a.publish({ type: 'QUEUED', data: { while: 'reconnecting' } });
    await fence(nodes[1]!, recorders);
    for (const recorder of recorders) expect(recorder.of('QUEUED')).toHaveLength(1);
  });

  it('an entry appended twice (ioredis resending an XADD whose reply was lost) is delivered once', async () => {
    await threeNodes();
    await nodes[0]!.publish({ type: 'RESENT', data: {} });
    await Promise.all(recorders.map((recorder) => recorder.until((events) => events.length === 1)));
    const key = `${deployment.prefix}${BUS_STREAM}`;
    const [[, fields] = ['', []]] = await admin.xrevrange(key, '+', '-', 'COUNT', 1);
    await admin.xadd(key, '*', ...fields);
    await fence(nodes[1]!, recorders);
    for (const recorder of recorders) expect(recorder.of('RESENT')).toHaveLength(1);
  });

  it("a node starts at the stream's end: it gets what is published after it is open, not what came before", async () => {
    const early = await deployment.node({ name: `${run}-early` });
    const earlyRecorder = new Recorder(early);
    await early.publish({ type: 'BEFORE', data: {} });
    await earlyRecorder.until((events) => events.length === 1);
    const late = await deployment.node({ name: `${run}-late` });
    const lateRecorder = new Recorder(late);
    await early.publish({ type: 'AFTER', data: {} });
    await fence(early, [earlyRecorder, lateRecorder]);
    expect(withoutFences(lateRecorder.events).map((event) => event.type)).toEqual(['AFTER']);
  });

  it('close() returns at once while the reader is reconnecting, stops delivery, and leaves the publishing connection open', async () => {
    const connection = await deployment.connection();
    const closing = await deployment.node({ redis: connection, name: `${run}-closing` });
    const witness = await deployment.node({ name: `${run}-witness` });
    const closingRecorder = new Recorder(closing);
    const witnessRecorder = new Recorder(witness);
    expect(await killReader(`${run}-closing`)).toBe(1);
    await closing.close();
    await witness.publish({ type: 'AFTER_CLOSE', data: {} });
    await fence(witness, [witnessRecorder]);
    expect(closingRecorder.events).toEqual([]);
    expect(await connection.ping()).toBe('PONG');
  });

  it('the stream lives under the connection key prefix and is trimmed to about maxLength (MAXLEN ~)', async () => {
    const node = await deployment.node({ name: `${run}-trim`, maxLength: 10 });
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(Array.from({ length: 100 }, (_, i) => node.publish({ type: 'TRIM', data: { i } })));
    }
    const key = `${deployment.prefix}${BUS_STREAM}`;
    expect(await admin.type(key)).toBe('stream');
    const length = await admin.xlen(key);
    expect(length).toBeGreaterThanOrEqual(10);
    expect(length).toBeLessThan(1000);
  });
});
