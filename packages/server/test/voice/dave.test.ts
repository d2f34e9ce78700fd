/**
 * DAVE delivery service (protocol.md, Group Key Exchange) driven by `@snazzah/davey` sessions, the MLS client
 * of `@discordjs/voice`: the server is only the external sender, and the members' frame keys must agree.
 */
import { decodeWelcome } from 'ts-mls/welcome.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DaveDeliveryService } from '../../src/domains/voice/dave/service.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { CALL_ID, DavePeer, exchange, settle } from './dave-peers.js';

const A = '158049329150427136';
const B = '246800246800246800';
const C = '369369369369369369';
const D = '481516234248151623';

let clock: ManualClock;
let service: DaveDeliveryService;
let roster: Set<string>;

beforeEach(async () => {
  clock = new ManualClock('2026-03-02T00:00:00Z');
  service = await DaveDeliveryService.create({ clock, sweepIntervalMs: 0 });
  roster = new Set();
});

afterEach(() => service.close());

function rejections(): string[] {
  return [...(service.call(CALL_ID)?.rejections ?? [])];
}

function peer(userId: string): DavePeer {
  return new DavePeer(userId, service, roster);
}

function expectFramesFlow(members: readonly DavePeer[]): void {
  let marker = 1;
  for (const from of members) {
    for (const to of members) {
      if (from === to) continue;
      const { sent, received, wire } = exchange(from, to, marker++);
      expect(received.equals(sent)).toBe(true);
      expect(wire.equals(sent)).toBe(false);
      // Every end-to-end encrypted frame ends with the 0xFAFA magic marker the forwarder checks.
      expect(wire.readUInt16BE(wire.length - 2)).toBe(0xfafa);
    }
  }
}

async function formGroup(...ids: string[]): Promise<DavePeer[]> {
  const peers = ids.map(peer);
  for (const p of peers) {
    await p.connect();
    await settle(service, peers);
  }
  await settle(service, peers);
  return peers;
}

describe('DAVE initial group creation (protocol.md, Initial Group Creation)', () => {
  it('sends the external sender after op 4 and forms a group of two whose frame keys agree', async () => {
    const [a, b] = (await formGroup(A, B)) as [DavePeer, DavePeer];
    expect(a.ops()[0]).toBe(25);
    const sender = a.received[0];
    expect(
      sender && 'binary' in sender && sender.binary.equals(Buffer.from(service.externalSender.package)),
    ).toBe(true);
    expect(a.session.epoch).toBe(1n);
    expect(b.session.epoch).toBe(1n);
    expect(service.call(CALL_ID)?.epoch).toBe(1n);
    // One epoch committed: what /metrics reports as hearth_voice_dave_epochs_total.
    expect(service.epochTransitions).toBe(1);
    expect(service.call(CALL_ID)?.leaves.length).toBe(2);
    // One commit was announced: op 29 to its committer only, op 30 to the other, then op 22 to both.
    const committer = a.ops().includes(29) ? a : b;
    const joiner = committer === a ? b : a;
    expect(committer.ops().filter((op) => op === 29)).toHaveLength(1);
    expect(committer.ops()).not.toContain(30);
    expect(joiner.ops().filter((op) => op === 30)).toHaveLength(1);
    expect(joiner.ops()).not.toContain(29);
    expect(a.executed).toEqual(b.executed);
    expect(a.executed).toHaveLength(1);
    expect(a.session.voicePrivacyCode).toBe(b.session.voicePrivacyCode);
    expect(a.session.voicePrivacyCode).toMatch(/^\d{30}$/);
    expectFramesFlow([a, b]);
  });

  it('sends each joiner only its own part of the Welcome', async () => {
    const a = peer(A);
    const b = peer(B);
    const c = peer(C);
    // A waits until both others are pending, so a single commit adds two members.
    await a.connect();
    await b.connect();
    await c.connect();
    const peers = [a, b, c];
    b.commitHook = () => undefined;
    c.commitHook = () => undefined;
    await settle(service, peers);
    expect(b.welcomes).toHaveLength(1);
    expect(c.welcomes).toHaveLength(1);
    const [bWelcome] = decodeWelcome(b.welcomes[0] as Buffer, 0) ?? [];
    const [cWelcome] = decodeWelcome(c.welcomes[0] as Buffer, 0) ?? [];
    expect(bWelcome?.secrets).toHaveLength(1);
    expect(cWelcome?.secrets).toHaveLength(1);
    expect(
      Buffer.from(bWelcome?.secrets[0]?.newMember ?? []).equals(
        Buffer.from(cWelcome?.secrets[0]?.newMember ?? []),
      ),
    ).toBe(false);
    expect(service.call(CALL_ID)?.leaves).toEqual([A, B, C]);
    expectFramesFlow(peers);
  });
});

describe('DAVE established group (protocol.md, Member Add / Member Remove)', () => {
  it('adds a third member in a new epoch and removes a leaver in the next, frames flowing throughout', async () => {
    const [a, b] = (await formGroup(A, B)) as [DavePeer, DavePeer];
    const c = peer(C);
    await c.connect();
    const three = [a, b, c];
    await settle(service, three);
    for (const p of three) expect(p.session.epoch).toBe(2n);
    expect(c.ops()).toContain(30);
    expect(c.ops()).not.toContain(29);
    expect(service.call(CALL_ID)?.leaves).toEqual([A, B, C]);
    expectFramesFlow(three);
    expect(new Set(three.map((p) => p.session.voicePrivacyCode)).size).toBe(1);

    await b.disconnect();
    const two = [a, c];
    await settle(service, two);
    for (const p of two) expect(p.session.epoch).toBe(3n);
    expect(service.call(CALL_ID)?.leaves).toEqual([A, undefined, C]);
    expect(a.session.getUserIds().sort()).toEqual([A, C].sort());
    expectFramesFlow(two);

    // A fourth member takes the leftmost blank leaf (RFC 9420 §12.3), as the server's view says.
    const d = peer(D);
    await d.connect();
    await settle(service, [a, c, d]);
    expect(service.call(CALL_ID)?.leaves).toEqual([A, D, C]);
    expect(d.session.ownLeafIndex).toBe(1);
    expectFramesFlow([a, c, d]);
  });

  it('resets a sole remaining member (op 24 epoch 1, op 21 transition 0), then forms a new group', async () => {
    const [a, b] = (await formGroup(A, B)) as [DavePeer, DavePeer];
    const before = a.received.length;
    await b.disconnect();
    await settle(service, [a]);
    const after = a.received.slice(before);
    expect(after).toEqual([
      { op: 24, d: { protocol_version: 1, epoch: 1 } },
      { op: 21, d: { protocol_version: 1, transition_id: 0 } },
    ]);
    expect(service.call(CALL_ID)?.epoch).toBe(0n);
    expect(a.session.epoch ?? 0n).toBe(0n);

    const c = peer(C);
    await c.connect();
    await settle(service, [a, c]);
    expect(a.session.epoch).toBe(1n);
    expect(c.session.epoch).toBe(1n);
    expectFramesFlow([a, c]);
  });

  it('recovers a member that flagged an invalid welcome (op 31): Remove, then Add with its new key package', async () => {
    const [a, b] = (await formGroup(A, B)) as [DavePeer, DavePeer];
    const c = peer(C);
    await c.connect();
    // C's welcome is corrupted on the way, so C flags it (op 31) and sends a new key package.
    const corrupt = (peerOf: DavePeer) => {
      const original = peerOf.sendBinary.bind(peerOf);
      let once = true;
      peerOf.sendBinary = (op, payload) => {
        if (op === 30 && once) {
          once = false;
          const broken = Buffer.from(payload);
          broken.writeUInt8(broken.readUInt8(broken.length - 1) ^ 0xff, broken.length - 1);
          original(op, broken);
        } else original(op, payload);
      };
    };
    corrupt(c);
    const three = [a, b, c];
    await settle(service, three);
    expect(c.ops().filter((op) => op === 30)).toHaveLength(2);
    for (const p of three) expect(p.session.epoch).toBe(3n);
    expect(service.call(CALL_ID)?.leaves).toEqual([A, B, C]);
    expectFramesFlow(three);
  });
});

describe('DAVE and a new voice session of a member', () => {
  it('removes the old leaf of a user who reconnects and adds its new session (Member Remove: re-added with a different key package)', async () => {
    const [a, b] = (await formGroup(A, B)) as [DavePeer, DavePeer];
    const c = peer(C);
    await c.connect();
    await settle(service, [a, b, c]);
    // C's client restarts: a new session (new keys) joins before the old one is known to be gone.
    const c2 = peer(C);
    await c2.connect();
    // The old session's end, reported late, leaves the new one in place.
    await service.leave(CALL_ID, c);
    await settle(service, [a, b, c2]);
    // One commit removes the stale leaf and adds the new session into it (Recovery from Invalid Commit or Welcome).
    for (const p of [a, b, c2]) expect(p.session.epoch).toBe(3n);
    expect(service.call(CALL_ID)?.leaves).toEqual([A, B, C]);
    expectFramesFlow([a, b, c2]);
  });
});

describe('DAVE commit validity (protocol.md, Voice Gateway Commit Validity, Commit Ordering)', () => {
  it('announces only the first valid commit of an epoch', async () => {
    const a = peer(A);
    const b = peer(B);
    await a.connect();
    await b.connect();
    await settle(service, [a, b]);
    // Both committed for epoch 0 (each adding the other); only one commit was announced.
    expect(a.commits.length + b.commits.length).toBe(2);
    const announced = [...a.received, ...b.received].filter((m) => m.op === 29);
    expect(announced).toHaveLength(1);
    expect(service.call(CALL_ID)?.rejections).toEqual(['commit_wrong_epoch']);
  });

  it('does not announce a commit that leaves out a proposal, nor one replayed for a past epoch', async () => {
    const [a, b] = (await formGroup(A, B)) as [DavePeer, DavePeer];
    const seen = rejections();
    const c = peer(C);
    const d = peer(D);
    // A and B hold their commits so C's and D's Adds are both in flight.
    const held: Buffer[] = [];
    a.commitHook = (_p, body) => {
      held.push(body);
      return undefined;
    };
    b.commitHook = () => undefined;
    await c.connect();
    await settle(service, [a, b, c]);
    const onlyC = held.at(-1) as Buffer;
    await d.connect();
    await settle(service, [a, b, c, d]);
    const both = held.at(-1) as Buffer;
    expect(both.equals(onlyC)).toBe(false);

    const announcedBefore = b.ops().filter((op) => op === 29).length;
    await service.binary(CALL_ID, A, 28, onlyC);
    expect(rejections().slice(seen.length)).toEqual(['commit_proposals']);
    expect(b.ops().filter((op) => op === 29).length).toBe(announcedBefore);

    await service.binary(CALL_ID, A, 28, both);
    await settle(service, [a, b, c, d]);
    for (const p of [a, b, c, d]) expect(p.session.epoch).toBe(2n);
    expectFramesFlow([a, b, c, d]);

    // The same commit again is for a past epoch.
    await service.binary(CALL_ID, A, 28, both);
    expect(rejections().slice(seen.length)).toEqual(['commit_proposals', 'commit_wrong_epoch']);
  });

  it('revokes the Add of a member who leaves before it is committed (op 27 revoke)', async () => {
    const [a, b] = (await formGroup(A, B)) as [DavePeer, DavePeer];
    const seen = rejections();
    a.commitHook = () => undefined;
    b.commitHook = () => undefined;
    const c = peer(C);
    await c.connect();
    await settle(service, [a, b, c]);
    await c.disconnect();
    await settle(service, [a, b]);
    const revoke = a.received.at(-1);
    expect(revoke?.op).toBe(27);
    expect(revoke && 'binary' in revoke ? revoke.binary[0] : undefined).toBe(1);
    // Nothing is left to commit: a commit of the revoked Add is refused.
    const stale = a.commits.at(-1) as Buffer;
    await service.binary(CALL_ID, A, 28, stale);
    expect(rejections().slice(seen.length)).toEqual(['commit_proposals']);
    expect(service.call(CALL_ID)?.epoch).toBe(1n);
  });

  it('refuses a key package whose credential is not the sender', async () => {
    const a = peer(A);
    await a.connect();
    const impostor = peer(B);
    await service.binary(CALL_ID, A, 26, impostor.session.getSerializedKeyPackage());
    await service.binary(CALL_ID, A, 26, Buffer.from([1, 2, 3]));
    expect(service.call(CALL_ID)?.rejections).toEqual(['key_package_invalid', 'key_package_invalid']);
  });
});

describe('DAVE transitions (protocol.md, Commit Handling)', () => {
  it('executes a transition after the timeout on the injected clock when a member never answers', async () => {
    const a = peer(A);
    const b = peer(B);
    b.ready = false;
    await a.connect();
    await b.connect();
    await settle(service, [a, b]);
    expect(a.ops()).not.toContain(22);
    clock.advance(1_999);
    service.expireTransitions();
    await settle(service, [a, b]);
    expect(a.ops()).not.toContain(22);
    clock.advance(1);
    service.expireTransitions();
    await settle(service, [a, b]);
    expect(a.ops().filter((op) => op === 22)).toHaveLength(1);
    expect(b.ops().filter((op) => op === 22)).toHaveLength(1);
  });
});

describe('DAVE in mixed calls before 1 March 2026 (protocol.md, Initial Transitory Phase)', () => {
  it('downgrades the call when a client without DAVE joins and upgrades it when that client leaves', async () => {
    clock.set('2026-02-01T00:00:00Z');
    const [a, b] = (await formGroup(A, B)) as [DavePeer, DavePeer];
    const legacy = peer(C);
    expect(await legacy.connect(0)).toBe(0);
    await settle(service, [a, b]);
    expect(legacy.received).toEqual([]);
    const prepare = a.received.find((m) => m.op === 21);
    expect(prepare).toEqual({ op: 21, d: { protocol_version: 0, transition_id: expect.any(Number) } });
    for (const p of [a, b]) expect(p.protocolVersion).toBe(0);

    await legacy.disconnect();
    await settle(service, [a, b]);
    expect(a.received.filter((m) => m.op === 24).at(-1)).toEqual({
      op: 24,
      d: { protocol_version: 1, epoch: 1 },
    });
    for (const p of [a, b]) {
      expect(p.protocolVersion).toBe(1);
      expect(p.session.epoch).toBe(1n);
    }
    expectFramesFlow([a, b]);
  });
});
