/**
 * The SDK's DAVE member (packages/sdk/src/voice/dave.ts) with each of its providers, `@snazzah/davey`
 * (openmls) and the plain TypeScript one on ts-mls, against Hearth's DAVE delivery service and peers that
 * react as @discordjs/voice does (davey): they build one MLS group, each decrypts the other's frames, and the
 * group survives a third member joining and leaving.
 */
import { VoiceOpcodes } from '@hearth/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DaveMember, type DaveProvider } from '../../../sdk/src/voice/dave.js';
import { tsMlsDave } from '../../../sdk/src/voice/dave-ts.js';
import { nodeVoiceNetwork } from '../../../sdk/src/voice/node-voice.js';
import type { DaveMemberLink } from '../../src/domains/voice/dave/call.js';
import { DaveDeliveryService } from '../../src/domains/voice/dave/service.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { CALL_ID, CHANNEL_ID, DavePeer, settle } from './dave-peers.js';

const SDK_USER = '158049329150427136';
const PEER = '246800246800246800';
const THIRD = '369369369369369369';
const providers: Array<[string, DaveProvider]> = [
  ['@snazzah/davey', nodeVoiceNetwork().dave as DaveProvider],
  ['ts-mls', tsMlsDave()],
];

/** The SDK's member wired to the service as the voice gateway would: its ops in, the service's ops out. */
class SdkSide implements DaveMemberLink {
  readonly inbox: Array<() => void> = [];
  readonly sent: number[] = [];
  readonly logs: string[] = [];
  /** The commits this member sent (op 28, without a Welcome) and those the gateway announced to it (op 29). */
  readonly commits: Buffer[] = [];
  readonly announced: Buffer[] = [];
  member: DaveMember | undefined;
  readonly #work: Promise<void>[] = [];

  constructor(
    private readonly provider: DaveProvider,
    private readonly service: DaveDeliveryService,
    private readonly roster: Set<string>,
    readonly userId = SDK_USER,
  ) {}

  sendJson(op: number, d: Record<string, unknown>): void {
    this.inbox.push(() => this.member?.onJson(op, d));
  }

  sendBinary(op: number, payload: Uint8Array): void {
    if (op === VoiceOpcodes.DaveMlsAnnounceCommitTransition)
      this.announced.push(Buffer.from(payload.subarray(2)));
    this.inbox.push(() => this.member?.onBinary(op, Uint8Array.from(payload)));
  }

  async connect(): Promise<void> {
    this.roster.add(this.userId);
    const version = this.service.join(CALL_ID, CHANNEL_ID, this, this.provider.maxProtocolVersion);
    await this.service.described(CALL_ID, this.userId);
    this.member = new DaveMember(this.provider, this.userId, CHANNEL_ID, version, {
      sendJson: (op, d) => {
        this.sent.push(op);
        const id = Number((d as { transition_id?: number }).transition_id ?? 0);
        if (op === VoiceOpcodes.DaveTransitionReady)
          this.#work.push(this.service.transitionReady(CALL_ID, this.userId, id));
        if (op === VoiceOpcodes.DaveMlsInvalidCommitWelcome)
          this.#work.push(this.service.invalidCommitWelcome(CALL_ID, this.userId));
      },
      sendBinary: (op, payload) => {
        this.sent.push(op);
        if (op === VoiceOpcodes.DaveMlsCommitWelcome) this.commits.push(Buffer.from(payload));
        this.#work.push(this.service.binary(CALL_ID, this.userId, op, payload));
      },
      connectedUserIds: () => [...this.roster],
      log: (message) => this.logs.push(message),
    });
    await this.drain();
  }

  /** Handles what the service sent; true when anything was. */
  async drain(): Promise<boolean> {
    let handled = false;
    for (let next = this.inbox.shift(); next; next = this.inbox.shift()) {
      next();
      handled = true;
    }
    await this.member?.idle();
    await Promise.all(this.#work.splice(0));
    return handled;
  }
}

async function settleAll(
  service: DaveDeliveryService,
  sdk: SdkSide | SdkSide[],
  peers: DavePeer[],
): Promise<void> {
  const sides = Array.isArray(sdk) ? sdk : [sdk];
  for (let round = 0; round < 50; round++) {
    await settle(service, peers);
    let handled = false;
    for (const side of sides) if (await side.drain()) handled = true;
    await service.idle();
    const quiet =
      sides.every((side) => side.inbox.length === 0) && peers.every((peer) => peer.inbox.length === 0);
    if (!handled && quiet) return;
  }
}

/** A frame the SDK encrypts is decrypted by the peer, and the other way round; the wire is never the plaintext. */
function expectBothWays(sdk: SdkSide, peer: DavePeer, marker: number): void {
  const member = sdk.member as DaveMember;
  expect(member.active).toBe(true);
  const sent = new Uint8Array(40).fill(marker);
  const wire = member.encrypt(sent);
  expect(Buffer.from(wire).equals(Buffer.from(sent))).toBe(false);
  expect(Buffer.from(wire).readUInt16BE(wire.length - 2)).toBe(0xfafa);
  expect([...peer.session.decrypt(SDK_USER, 0, Buffer.from(wire))]).toEqual([...sent]);
  const back = peer.session.encryptOpus(Buffer.alloc(40, marker + 1));
  expect([...(member.decrypt(peer.userId, back) ?? [])]).toEqual([...Buffer.alloc(40, marker + 1)]);
  // Silence frames pass in clear both ways.
  expect([...member.encrypt(Uint8Array.of(0xf8, 0xff, 0xfe))]).toEqual([0xf8, 0xff, 0xfe]);
}

describe.each(providers)(
  'the SDK DAVE member on %s with Hearth’s delivery service and @discordjs/voice-like peers',
  (_name, provider) => {
    let service: DaveDeliveryService;
    let roster: Set<string>;

    beforeEach(async () => {
      service = await DaveDeliveryService.create({
        clock: new ManualClock('2026-03-02T00:00:00Z'),
        sweepIntervalMs: 0,
      });
      roster = new Set();
    });
    afterEach(() => service.close());

    it('offers DAVE protocol version 1', () => {
      expect(provider.maxProtocolVersion).toBe(1);
    });

    it('SDK first, then the peer: one group, frames decrypt both ways', async () => {
      const sdk = new SdkSide(provider, service, roster);
      await sdk.connect();
      const peer = new DavePeer(PEER, service, roster);
      // The peer holds its commit back, so the group is the SDK's: its commit, and its Welcome to the peer.
      peer.commitHook = () => undefined;
      await peer.connect();
      await settleAll(service, sdk, [peer]);
      expect(sdk.sent).toContain(VoiceOpcodes.DaveMlsKeyPackage);
      expect(sdk.sent).toContain(VoiceOpcodes.DaveMlsCommitWelcome);
      expect(peer.welcomes).toHaveLength(1);
      expectBothWays(sdk, peer, 1);
    });

    it('an Add proposal for a user the gateway did not announce is not committed; the peer’s group takes the SDK in', async () => {
      const sdk = new SdkSide(provider, service, new Set());
      await sdk.connect();
      const peer = new DavePeer(PEER, service, roster);
      roster.add(SDK_USER);
      await peer.connect();
      await settleAll(service, sdk, [peer]);
      expect(sdk.sent).not.toContain(VoiceOpcodes.DaveMlsCommitWelcome);
      expect(sdk.logs.some((message) => message.includes('DAVE op 27 failed'))).toBe(true);
      expectBothWays(sdk, peer, 11);
    });

    it('a commit the SDK cannot process: op 31 and a fresh key package, and the gateway takes it back in', async () => {
      const sdk = new SdkSide(provider, service, roster);
      await sdk.connect();
      const peer = new DavePeer(PEER, service, roster);
      await peer.connect();
      await settleAll(service, sdk, [peer]);
      const keyPackages = sdk.sent.filter((op) => op === VoiceOpcodes.DaveMlsKeyPackage).length;
      sdk.sendBinary(VoiceOpcodes.DaveMlsAnnounceCommitTransition, Uint8Array.of(0, 7, 1, 2, 3));
      await settleAll(service, sdk, [peer]);
      expect(sdk.sent).toContain(VoiceOpcodes.DaveMlsInvalidCommitWelcome);
      expect(sdk.sent.filter((op) => op === VoiceOpcodes.DaveMlsKeyPackage).length).toBe(keyPackages + 1);
      expectBothWays(sdk, peer, 13);
    });

    it('peer first, then the SDK; a third member joins and leaves with the group intact', async () => {
      const peer = new DavePeer(PEER, service, roster);
      await peer.connect();
      await settleAll(service, new SdkSide(provider, service, new Set()), [peer]);
      const sdk = new SdkSide(provider, service, roster);
      await sdk.connect();
      await settleAll(service, sdk, [peer]);
      expectBothWays(sdk, peer, 3);

      // The SDK adds the third member (the peer holds its commit back); the third joins by the SDK's Welcome.
      peer.commitHook = () => undefined;
      const third = new DavePeer(THIRD, service, roster);
      await third.connect();
      await settleAll(service, sdk, [peer, third]);
      expectBothWays(sdk, peer, 5);
      expectBothWays(sdk, third, 7);

      expect(third.welcomes).toHaveLength(1);

      // The peer commits the removal this time; the SDK follows its commit.
      peer.commitHook = undefined;
      await third.disconnect();
      await settleAll(service, sdk, [peer]);
      expectBothWays(sdk, peer, 9);
    });
  },
);

describe('two SDK members on ts-mls with Hearth’s delivery service, and a davey peer joining and leaving', () => {
  it('each ts-mls member processes the other’s commits and decrypts its frames, across both epochs', async () => {
    const service = await DaveDeliveryService.create({
      clock: new ManualClock('2026-03-02T00:00:00Z'),
      sweepIntervalMs: 0,
    });
    const roster = new Set<string>();
    const provider = tsMlsDave();
    const first = new SdkSide(provider, service, roster);
    const second = new SdkSide(provider, service, roster, THIRD);
    await first.connect();
    await second.connect();
    await settleAll(service, [first, second], []);
    const exchange = (from: SdkSide, to: SdkSide, marker: number) => {
      const sent = new Uint8Array(40).fill(marker);
      const received = (to.member as DaveMember).decrypt(
        from.userId,
        (from.member as DaveMember).encrypt(sent),
      );
      expect([...(received ?? [])]).toEqual([...sent]);
    };
    exchange(first, second, 1);
    exchange(second, first, 2);

    // The second member's commit of the davey peer's addition reaches the gateway first (it is drained
    // first): the first member processes a ts-mls commit, and the peer joins by a ts-mls Welcome.
    const peer = new DavePeer(PEER, service, roster);
    peer.commitHook = () => undefined;
    await peer.connect();
    await settleAll(service, [second, first], [peer]);
    const announced = first.announced.at(-1) as Buffer;
    expect(second.commits.some((commit) => commit.subarray(0, announced.length).equals(announced))).toBe(
      true,
    );
    expect(first.commits.some((commit) => commit.subarray(0, announced.length).equals(announced))).toBe(
      false,
    );
    expect(peer.welcomes).toHaveLength(1);
    expect(first.logs).toEqual([]);
    exchange(first, second, 3);
    exchange(second, first, 4);
    const wire = (first.member as DaveMember).encrypt(new Uint8Array(40).fill(5));
    expect([...peer.session.decrypt(first.userId, 0, Buffer.from(wire))]).toEqual([
      ...new Uint8Array(40).fill(5),
    ]);

    await peer.disconnect();
    await settleAll(service, [first, second], []);
    exchange(first, second, 6);
    exchange(second, first, 7);
    service.close();
  });
});
