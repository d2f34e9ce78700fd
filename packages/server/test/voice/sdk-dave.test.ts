/**
 * The SDK's DAVE member (packages/sdk/src/voice/dave.ts, on `@snazzah/davey`) against Hearth's DAVE delivery
 * service and a peer that reacts as @discordjs/voice does: they build one MLS group, each decrypts the
 * other's frames, and the group survives a third member joining and leaving.
 */
import { VoiceOpcodes } from '@hearth/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DaveMember } from '../../../sdk/src/voice/dave.js';
import { nodeVoiceNetwork } from '../../../sdk/src/voice/node-voice.js';
import type { DaveMemberLink } from '../../src/domains/voice/dave/call.js';
import { DaveDeliveryService } from '../../src/domains/voice/dave/service.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { CALL_ID, CHANNEL_ID, DavePeer, settle } from './dave-peers.js';

const SDK_USER = '158049329150427136';
const PEER = '246800246800246800';
const THIRD = '369369369369369369';
const provider = nodeVoiceNetwork().dave;

/** The SDK's member wired to the service as the voice gateway would: its ops in, the service's ops out. */
class SdkSide implements DaveMemberLink {
  readonly userId = SDK_USER;
  readonly inbox: Array<() => void> = [];
  readonly sent: number[] = [];
  member: DaveMember | undefined;
  readonly #work: Promise<void>[] = [];

  constructor(
    private readonly service: DaveDeliveryService,
    private readonly roster: Set<string>,
  ) {}

  sendJson(op: number, d: Record<string, unknown>): void {
    this.inbox.push(() => this.member?.onJson(op, d));
  }

  sendBinary(op: number, payload: Uint8Array): void {
    this.inbox.push(() => this.member?.onBinary(op, Uint8Array.from(payload)));
  }

  async connect(): Promise<void> {
    this.roster.add(SDK_USER);
    const version = this.service.join(CALL_ID, CHANNEL_ID, this, provider?.maxProtocolVersion ?? 0);
    await this.service.described(CALL_ID, SDK_USER);
    this.member = new DaveMember(provider as NonNullable<typeof provider>, SDK_USER, CHANNEL_ID, version, {
      sendJson: (op, d) => {
        this.sent.push(op);
        const id = Number((d as { transition_id?: number }).transition_id ?? 0);
        if (op === VoiceOpcodes.DaveTransitionReady)
          this.#work.push(this.service.transitionReady(CALL_ID, SDK_USER, id));
        if (op === VoiceOpcodes.DaveMlsInvalidCommitWelcome)
          this.#work.push(this.service.invalidCommitWelcome(CALL_ID, SDK_USER));
      },
      sendBinary: (op, payload) => {
        this.sent.push(op);
        this.#work.push(this.service.binary(CALL_ID, SDK_USER, op, payload));
      },
      connectedUserIds: () => [...this.roster],
      log: () => undefined,
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
    await Promise.all(this.#work.splice(0));
    return handled;
  }
}

async function settleAll(service: DaveDeliveryService, sdk: SdkSide, peers: DavePeer[]): Promise<void> {
  for (let round = 0; round < 50; round++) {
    await settle(service, peers);
    const handled = await sdk.drain();
    await service.idle();
    if (!handled && sdk.inbox.length === 0 && peers.every((peer) => peer.inbox.length === 0)) return;
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

describe('the SDK DAVE member with Hearth’s delivery service and a @discordjs/voice-like peer', () => {
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

  it('offers the protocol version of @snazzah/davey (1)', () => {
    expect(provider?.maxProtocolVersion).toBe(1);
  });

  it('SDK first, then the peer: one group, frames decrypt both ways', async () => {
    const sdk = new SdkSide(service, roster);
    await sdk.connect();
    const peer = new DavePeer(PEER, service, roster);
    await peer.connect();
    await settleAll(service, sdk, [peer]);
    expect(sdk.sent).toContain(VoiceOpcodes.DaveMlsKeyPackage);
    expectBothWays(sdk, peer, 1);
  });

  it('peer first, then the SDK; a third member joins and leaves with the group intact', async () => {
    const peer = new DavePeer(PEER, service, roster);
    await peer.connect();
    await settleAll(service, new SdkSide(service, new Set()), [peer]);
    const sdk = new SdkSide(service, roster);
    await sdk.connect();
    await settleAll(service, sdk, [peer]);
    expectBothWays(sdk, peer, 3);

    const third = new DavePeer(THIRD, service, roster);
    await third.connect();
    await settleAll(service, sdk, [peer, third]);
    expectBothWays(sdk, peer, 5);
    expectBothWays(sdk, third, 7);

    await third.disconnect();
    await settleAll(service, sdk, [peer]);
    expectBothWays(sdk, peer, 9);
  });
});
