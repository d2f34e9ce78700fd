/**
 * A DAVE session in plain TypeScript on `ts-mls` (discord/dave-protocol protocol.md), for browsers and as
 * Node's fallback when `@snazzah/davey`'s native addon is unavailable. It behaves as davey does: a pending
 * one-member group once the external sender is known, commits to the gateway's proposals by reference as
 * PublicMessages with the ratchet tree in the Welcome, and one key ratchet per member from the MLS exporter.
 */
import { DaveMls, DaveProposalsOperation } from '@hearth/protocol';
import { p256 } from '@noble/curves/nist.js';
import {
  acceptAll,
  type CiphersuiteImpl,
  type ClientState,
  createCommit,
  createGroup,
  decodeExternalSender,
  decodeMlsMessage,
  emptyPskIndex,
  encodeMlsMessage,
  generateKeyPackageWithKey,
  getCiphersuiteFromName,
  getCiphersuiteImpl,
  joinGroup,
  type KeyPackage,
  mlsExporter,
  type PrivateKeyPackage,
  processMessage,
} from 'ts-mls';
import { getGroupMembers } from 'ts-mls/clientState.js';
import { encodeKeyPackage, makeKeyPackageRef } from 'ts-mls/keyPackage.js';
import { bytesToBase64 } from 'ts-mls/util/byteArray.js';
import { decodeWelcome, encodeWelcome } from 'ts-mls/welcome.js';
import type { DaveCommitWelcome, DaveProvider, DaveSessionLike } from './dave.js';
import { FrameDecryptor, FrameEncryptor, HashRatchet } from './dave-frames.js';

const MEDIA_KEY_LABEL = 'Discord Secure Frames v0';
const MEDIA_KEY_BYTES = 16;
/** How long frames under a replaced key ratchet still decrypt (protocol.md: receivers keep old keys ~10 s). */
const RATCHET_EXPIRY_S = 10;

let suite: Promise<CiphersuiteImpl> | undefined;
function ciphersuite(): Promise<CiphersuiteImpl> {
  suite ??= getCiphersuiteImpl(getCiphersuiteFromName(DaveMls.CiphersuiteName));
  return suite;
}

function u64(id: string, littleEndian: boolean): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(id), littleEndian);
  return bytes;
}

function userIdOf(identity: Uint8Array): string | undefined {
  if (identity.length !== 8) return undefined;
  return new DataView(identity.buffer, identity.byteOffset, 8).getBigUint64(0).toString();
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** Reads an MLS variable-length vector (RFC 9420 §2.1.2) at `at`: its body and where it ends. */
function readVector(bytes: Uint8Array, at: number): { body: Uint8Array; end: number } {
  const first = bytes[at];
  if (first === undefined) throw new Error('truncated vector');
  const prefix = first >> 6;
  if (prefix === 3) throw new Error('invalid vector length');
  const size = 1 << prefix;
  let length = first & 0x3f;
  for (let i = 1; i < size; i++) length = length * 256 + (bytes[at + i] ?? Number.NaN);
  const start = at + size;
  if (!Number.isFinite(length) || start + length > bytes.length) throw new Error('truncated vector');
  return { body: bytes.subarray(start, start + length), end: start + length };
}

/** An MLS variable-length vector prefix for `length` bytes (lengths below 2^30). */
function vectorPrefix(length: number): Uint8Array {
  if (length < 0x40) return Uint8Array.of(length);
  if (length < 0x4000) return Uint8Array.of(0x40 | (length >> 8), length & 0xff);
  const prefix = new Uint8Array(4);
  new DataView(prefix.buffer).setUint32(0, (0x8000_0000 | length) >>> 0);
  return prefix;
}

/** The group's `external_senders` extension as RFC 9420 §12.1.8.1 has it: a vector of ExternalSenders. */
function externalSendersData(externalSender: Uint8Array): Uint8Array {
  const prefix = vectorPrefix(externalSender.length);
  const data = new Uint8Array(prefix.length + externalSender.length);
  data.set(prefix, 0);
  data.set(externalSender, prefix.length);
  return data;
}

/**
 * ts-mls 1.6.4 reads an `external_senders` extension as one bare ExternalSender, not as the vector openmls
 * (and the RFC) write. An external sender's signature does not cover the GroupContext (RFC 9420 §6.1), so
 * its proposals are checked against a copy of the state whose extension is the bare sender; the state
 * that comes back gets the real GroupContext again.
 */
function withBareExternalSender(state: ClientState, externalSender: Uint8Array): ClientState {
  const extensions = state.groupContext.extensions.map((extension) =>
    extension.extensionType === 'external_senders'
      ? { extensionType: extension.extensionType, extensionData: externalSender }
      : extension,
  );
  return { ...state, groupContext: { ...state.groupContext, extensions } };
}

type Status = 'inactive' | 'pending' | 'awaiting-response' | 'active';

interface OwnKeyPackage {
  publicPackage: KeyPackage;
  privatePackage: PrivateKeyPackage;
}

interface OwnKeys {
  signKey: Uint8Array;
  publicKey: Uint8Array;
}

/** The MLS side of one call member on ts-mls, and its frame encryptor and per-sender decryptors. */
class TsMlsDaveSession implements DaveSessionLike {
  #userId: string;
  #groupId: Uint8Array;
  #keys: OwnKeys;
  #externalSender: Uint8Array | undefined;
  #group: ClientState | undefined;
  #status: Status = 'inactive';
  #ready = false;
  /** Our last commit, and the state it leads to once the gateway announces it (op 29). */
  #pendingCommit: { bytes: Uint8Array; state: ClientState } | undefined;
  /** Key packages sent since the last reinit, with their private keys, for the Welcome that names one. */
  #keyPackages: OwnKeyPackage[] = [];
  #encryptor = new FrameEncryptor();
  readonly #decryptors = new Map<string, FrameDecryptor>();

  constructor(
    userId: string,
    channelId: string,
    private readonly now: () => number,
  ) {
    this.#userId = userId;
    this.#groupId = u64(channelId, false);
    this.#keys = signingKeys();
  }

  get ready(): boolean {
    return this.#ready;
  }

  async reinit(_protocolVersion: number, userId: string, channelId: string): Promise<void> {
    this.reset();
    this.#userId = userId;
    this.#groupId = u64(channelId, false);
    this.#keys = signingKeys();
    this.#keyPackages = [];
    this.#encryptor = new FrameEncryptor();
    this.#decryptors.clear();
    this.#ready = false;
    if (this.#externalSender) await this.#createPendingGroup();
  }

  reset(): void {
    this.#group = undefined;
    this.#pendingCommit = undefined;
    this.#status = 'inactive';
  }

  async setExternalSender(externalSender: Uint8Array): Promise<void> {
    if (this.#status === 'awaiting-response' || this.#status === 'active') {
      throw new Error('already in a group');
    }
    const decoded = decodeExternalSender(externalSender, 0);
    if (!decoded || decoded[1] !== externalSender.length) throw new Error('not an ExternalSender');
    this.#externalSender = Uint8Array.from(externalSender);
    this.#group = undefined;
    await this.#createPendingGroup();
  }

  async getSerializedKeyPackage(): Promise<Uint8Array> {
    const keyPackage = await this.#keyPackage();
    this.#keyPackages.push(keyPackage);
    return encodeKeyPackage(keyPackage.publicPackage);
  }

  async processProposals(
    operation: number,
    proposals: Uint8Array,
    recognizedUserIds: string[],
  ): Promise<DaveCommitWelcome> {
    let group = this.#group;
    if (!group) throw new Error('no group');
    const cs = await ciphersuite();
    const { body, end } = readVector(proposals, 0);
    if (end !== proposals.length) throw new Error('bytes after the proposals');
    if (operation === DaveProposalsOperation.Append) {
      for (let at = 0; at < body.length; ) {
        const decoded = decodeMlsMessage(body, at);
        if (!decoded) throw new Error('not an MLSMessage');
        const [message, read] = decoded;
        at += read;
        if (message.wireformat !== 'mls_public_message') throw new Error('proposal not a PublicMessage');
        const { content } = message.publicMessage;
        if (content.contentType !== 'proposal') throw new Error('not a proposal');
        const proposal = content.proposal;
        if (proposal.proposalType === 'add') {
          const credential = proposal.add.keyPackage.leafNode.credential;
          const incoming = credential.credentialType === 'basic' ? userIdOf(credential.identity) : undefined;
          if (incoming === undefined || !recognizedUserIds.includes(incoming)) {
            throw new Error(`add proposal for an unexpected user ${incoming ?? '?'}`);
          }
        }
        const external = content.sender.senderType === 'external';
        const view = external ? withBareExternalSender(group, this.#externalSender as Uint8Array) : group;
        const result = await processMessage(message, view, emptyPskIndex, acceptAll, cs);
        if (result.kind !== 'newState') throw new Error('not a proposal');
        group = { ...result.newState, groupContext: group.groupContext };
      }
    } else {
      const unapplied = { ...group.unappliedProposals };
      for (let at = 0; at < body.length; ) {
        const ref = readVector(body, at);
        delete unapplied[bytesToBase64(ref.body)];
        at = ref.end;
      }
      group = { ...group, unappliedProposals: unapplied };
    }
    this.#group = group;
    this.#pendingCommit = undefined;
    if (Object.keys(group.unappliedProposals).length === 0) {
      if (this.#status === 'awaiting-response') this.#status = this.#ready ? 'active' : 'pending';
      return {};
    }
    const result = await createCommit(
      { state: group, cipherSuite: cs },
      { wireAsPublicMessage: true, ratchetTreeExtension: true },
    );
    const commit = encodeMlsMessage(result.commit);
    this.#pendingCommit = { bytes: commit, state: result.newState };
    this.#status = 'awaiting-response';
    return { commit, welcome: result.welcome ? encodeWelcome(result.welcome) : undefined };
  }

  async processWelcome(welcomeBytes: Uint8Array): Promise<void> {
    if (this.#group && this.#status === 'active') throw new Error('already in a group');
    const externalSender = this.#externalSender;
    if (!externalSender) throw new Error('no external sender');
    const decoded = decodeWelcome(welcomeBytes, 0);
    if (!decoded || decoded[1] !== welcomeBytes.length) throw new Error('not a Welcome');
    const [welcome] = decoded;
    const cs = await ciphersuite();
    const named = new Set(welcome.secrets.map((secret) => bytesToBase64(secret.newMember)));
    let ours: OwnKeyPackage | undefined;
    for (const candidate of this.#keyPackages) {
      if (named.has(bytesToBase64(await makeKeyPackageRef(candidate.publicPackage, cs.hash))))
        ours = candidate;
    }
    if (!ours) throw new Error('the Welcome names none of our key packages');
    const state = await joinGroup(welcome, ours.publicPackage, ours.privatePackage, emptyPskIndex, cs);
    const senders = state.groupContext.extensions.filter((e) => e.extensionType === 'external_senders');
    const sendersData = (senders[0] as { extensionData: Uint8Array } | undefined)?.extensionData;
    if (
      senders.length !== 1 ||
      !equal(sendersData ?? new Uint8Array(), externalSendersData(externalSender))
    ) {
      throw new Error('the group has another external sender');
    }
    if (!equal(state.groupContext.groupId, this.#groupId))
      throw new Error('the Welcome is for another group');
    this.#group = state;
    this.#pendingCommit = undefined;
    this.#status = 'active';
    await this.#updateRatchets();
  }

  async processCommit(commitBytes: Uint8Array): Promise<void> {
    const group = this.#group;
    if (!group) throw new Error('no group');
    if (this.#status === 'pending') throw new Error('the group is still pending');
    const decoded = decodeMlsMessage(commitBytes, 0);
    if (!decoded || decoded[1] !== commitBytes.length) throw new Error('not an MLSMessage');
    const [message] = decoded;
    if (message.wireformat !== 'mls_public_message') throw new Error('commit not a PublicMessage');
    if (!equal(message.publicMessage.content.groupId, this.#groupId))
      throw new Error('commit for another group');
    const pending = this.#pendingCommit;
    if (pending && equal(pending.bytes, commitBytes)) {
      // Our own commit won: the state it leads to was computed when we made it.
      this.#group = pending.state;
    } else {
      const result = await processMessage(message, group, emptyPskIndex, acceptAll, await ciphersuite());
      if (result.kind !== 'newState' || message.publicMessage.content.contentType !== 'commit') {
        throw new Error('not a commit');
      }
      this.#group = result.newState;
    }
    this.#pendingCommit = undefined;
    this.#status = 'active';
    await this.#updateRatchets();
  }

  encryptOpus(frame: Uint8Array): Uint8Array {
    if (!this.#ready) throw new Error('DAVE session not ready');
    return this.#encryptor.encrypt(frame);
  }

  decryptOpus(userId: string, frame: Uint8Array): Uint8Array {
    const decryptor = this.#decryptors.get(userId);
    if (!decryptor) throw new Error(`no decryptor for user ${userId}`);
    return decryptor.decrypt(frame);
  }

  canPassthrough(userId: string): boolean {
    return this.#decryptors.get(userId)?.canPassthrough ?? false;
  }

  setPassthroughMode(passthrough: boolean, expirySeconds = RATCHET_EXPIRY_S): void {
    for (const decryptor of this.#decryptors.values())
      decryptor.transitionToPassthrough(passthrough, expirySeconds);
  }

  async #keyPackage(): Promise<OwnKeyPackage> {
    const cs = await ciphersuite();
    return generateKeyPackageWithKey(
      { credentialType: 'basic', identity: u64(this.#userId, false) },
      {
        versions: ['mls10'],
        ciphersuites: [DaveMls.CiphersuiteName],
        extensions: [],
        proposals: [],
        credentials: ['basic'],
      },
      { notBefore: DaveMls.LifetimeNotBefore, notAfter: DaveMls.LifetimeNotAfter },
      [],
      this.#keys,
      cs,
    );
  }

  async #createPendingGroup(): Promise<void> {
    const externalSender = this.#externalSender as Uint8Array;
    const groupId = this.#groupId;
    const own = await this.#keyPackage();
    const cs = await ciphersuite();
    // Created with the extension ts-mls can read, then given the RFC's: only this member ever sees epoch 0,
    // and the epochs after it are derived from the GroupContext the members share.
    const created = await createGroup(
      groupId,
      own.publicPackage,
      own.privatePackage,
      [{ extensionType: 'external_senders', extensionData: externalSender }],
      cs,
    );
    // A reinit or a new external sender while this ran wins.
    if (this.#externalSender !== externalSender || this.#groupId !== groupId) return;
    const extensions = created.groupContext.extensions.map((extension) =>
      extension.extensionType === 'external_senders'
        ? { extensionType: extension.extensionType, extensionData: externalSendersData(externalSender) }
        : extension,
    );
    this.#group = { ...created, groupContext: { ...created.groupContext, extensions } };
    this.#status = 'pending';
  }

  /** Every member's key ratchet for this epoch; frames under the previous ones still decrypt for a while. */
  async #updateRatchets(): Promise<void> {
    const group = this.#group as ClientState;
    const cs = await ciphersuite();
    const members = new Set<string>();
    for (const leaf of getGroupMembers(group)) {
      const id = leaf.credential.credentialType === 'basic' ? userIdOf(leaf.credential.identity) : undefined;
      if (id !== undefined) members.add(id);
    }
    const ratchet = async (id: string) =>
      new HashRatchet(
        await mlsExporter(
          group.keySchedule.exporterSecret,
          MEDIA_KEY_LABEL,
          u64(id, true),
          MEDIA_KEY_BYTES,
          cs,
        ),
      );
    for (const id of members) {
      if (id === this.#userId) continue;
      let decryptor = this.#decryptors.get(id);
      if (!decryptor) {
        decryptor = new FrameDecryptor(this.now);
        this.#decryptors.set(id, decryptor);
      }
      decryptor.transitionToRatchet(await ratchet(id), RATCHET_EXPIRY_S);
    }
    for (const id of this.#decryptors.keys()) if (!members.has(id)) this.#decryptors.delete(id);
    this.#encryptor.setRatchet(await ratchet(this.#userId));
    this.#ready = true;
  }
}

/** A P-256 signing key pair; RFC 9420 §5.1.1 wants the uncompressed point as the public key. */
function signingKeys(): OwnKeys {
  const signKey = p256.utils.randomSecretKey();
  return { signKey, publicKey: p256.getPublicKey(signKey, false) };
}

export interface TsMlsDaveOptions {
  /** Milliseconds, for how long replaced keys and passthrough last; `Date.now` by default. */
  now?: () => number;
}

/** DAVE protocol version 1 on `ts-mls`: no native code, so it runs in browsers as well as on Node. */
export function tsMlsDave(options: TsMlsDaveOptions = {}): DaveProvider {
  const now = options.now ?? (() => Date.now());
  return {
    maxProtocolVersion: DaveMls.ProtocolVersion,
    create: (_protocolVersion, userId, channelId) => new TsMlsDaveSession(userId, channelId, now),
  };
}
