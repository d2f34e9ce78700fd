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
  readonly userId = SDK_USER;
  readonly inbox: Array<() => void> = [];
  readonly sent: number[] = [];
  readonly logs: string[] = [];
  member: DaveMember | undefined;
  readonly #work: Promise<void>[] = [];

  constructor(
    private readonly provider: DaveProvider,
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
    const version = this.service.join(CALL_ID, CHANNEL_ID, this, this.provider.maxProtocolVersion);
    await this.service.described(CALL_ID, SDK_USER);
    this.member = new DaveMember(this.provider, SDK_USER, CHANNEL_ID, version, {
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
