/**
 * The MLS the voice gateway needs as DAVE's delivery service, on ts-mls: its external sender, key package
 * validation, external Add/Remove proposals with their refs, and reading members' commits and welcomes.
 * The gateway holds no group secrets (protocol.md, Delivery Service): it never decrypts anything.
 */
import { DaveMls, DaveProposalsOperation } from '@hearth/protocol';
import { p256 } from '@noble/curves/nist.js';
import {
  type CiphersuiteImpl,
  type Commit,
  decodeMlsMessage,
  encodeExternalSender,
  encodeMlsMessage,
  type GroupContext,
  type GroupInfo,
  getCiphersuiteFromName,
  getCiphersuiteImpl,
  type KeyPackage,
  type Proposal,
  proposeExternal,
  type Welcome,
} from 'ts-mls';
import { makeProposalRef } from 'ts-mls/authenticatedContent.js';
import { lengthEncoder } from 'ts-mls/codec/variableLength.js';
import { decodeKeyPackage, makeKeyPackageRef, verifyKeyPackage } from 'ts-mls/keyPackage.js';
import { decodeWelcome, encodeWelcome } from 'ts-mls/welcome.js';

let suite: Promise<CiphersuiteImpl> | undefined;

/** Ciphersuite 2, built once per process. */
export function daveCiphersuite(): Promise<CiphersuiteImpl> {
  suite ??= getCiphersuiteImpl(getCiphersuiteFromName(DaveMls.CiphersuiteName));
  return suite;
}

/** A snowflake as the 8 big-endian bytes DAVE uses for credential identities and group ids. */
export function snowflakeBytes(id: string): Uint8Array {
  const bytes = new Uint8Array(DaveMls.IdentityBytes);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(id));
  return bytes;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** The voice server's external sender: a P-256 signing key pair and the basic credential op 25 carries. */
export class DaveExternalSender {
  readonly #signKey: Uint8Array;
  readonly publicKey: Uint8Array;
  /** The serialized `ExternalSender` (RFC 9420 §12.1.8.1) sent as op 25. */
  readonly package: Uint8Array;

  private constructor(publicKey: Uint8Array, signKey: Uint8Array, identity: Uint8Array) {
    this.publicKey = publicKey;
    this.#signKey = signKey;
    this.package = encodeExternalSender({
      signaturePublicKey: publicKey,
      credential: { credentialType: 'basic', identity },
    });
  }

  static async generate(identity: string): Promise<DaveExternalSender> {
    const cs = await daveCiphersuite();
    const { signKey } = await cs.signature.keygen();
    // RFC 9420 §5.1.1: an ECDSA SignaturePublicKey is the uncompressed point (ts-mls hands out the compressed one).
    const publicKey = p256.getPublicKey(signKey, false);
    return new DaveExternalSender(publicKey, signKey, new TextEncoder().encode(identity));
  }

  /**
   * An external proposal as a PublicMessage, and its ProposalRef. An external sender's signature does not
   * cover the GroupContext, so a context with the group id, epoch and our sender is all ts-mls needs.
   */
  async propose(groupId: Uint8Array, epoch: bigint, proposal: Proposal): Promise<SignedProposal> {
    const cs = await daveCiphersuite();
    const groupContext: GroupContext = {
      version: 'mls10',
      cipherSuite: DaveMls.CiphersuiteName,
      groupId,
      epoch,
      treeHash: new Uint8Array(),
      confirmedTranscriptHash: new Uint8Array(),
      extensions: [{ extensionType: 'external_senders', extensionData: this.package }],
    };
    const groupInfo = { groupContext } as GroupInfo;
    const message = await proposeExternal(groupInfo, proposal, this.publicKey, this.#signKey, cs);
    if (message.wireformat !== 'mls_public_message') throw new Error('ts-mls returned a non-public proposal');
    const { content, auth } = message.publicMessage;
    const ref = await makeProposalRef({ wireformat: 'mls_public_message', content, auth }, cs.hash);
    return { message: encodeMlsMessage(message), ref };
  }
}

export interface SignedProposal {
  /** The encoded MLSMessage. */
  message: Uint8Array;
  ref: Uint8Array;
}

/** Op 27's body: `u8 operation_type` then a `<V>` vector of MLSMessages (append) or of `ProposalRef<V>` (revoke). */
export function proposalsPayload(
  operation: DaveProposalsOperation,
  items: readonly Uint8Array[],
): Uint8Array {
  const parts =
    operation === DaveProposalsOperation.Append
      ? items
      : items.map((ref) => Buffer.concat([varint(ref.length), ref]));
  const body = Buffer.concat(parts);
  return Buffer.concat([Uint8Array.of(operation), varint(body.length), body]);
}

function varint(length: number): Uint8Array {
  const [size, write] = lengthEncoder(length);
  const buffer = new ArrayBuffer(size);
  write(0, buffer);
  return new Uint8Array(buffer);
}

export type KeyPackageCheck =
  | { ok: true; keyPackage: KeyPackage; ref: Uint8Array }
  | { ok: false; reason: string };

/** protocol.md, Key Packages › Validation: a bare KeyPackage, ciphersuite 2, identity = user id, full lifetime, signed. */
export async function validateKeyPackage(bytes: Uint8Array, userId: string): Promise<KeyPackageCheck> {
  let decoded: [KeyPackage, number] | undefined;
  try {
    decoded = decodeKeyPackage(bytes, 0);
  } catch {
    decoded = undefined;
  }
  if (decoded === undefined || decoded[1] !== bytes.length) return { ok: false, reason: 'not a KeyPackage' };
  const [keyPackage] = decoded;
  if (keyPackage.version !== 'mls10') return { ok: false, reason: 'MLS version' };
  if (keyPackage.cipherSuite !== DaveMls.CiphersuiteName) return { ok: false, reason: 'ciphersuite' };
  const { credential, lifetime } = keyPackage.leafNode;
  if (credential.credentialType !== 'basic' || !bytesEqual(credential.identity, snowflakeBytes(userId))) {
    return { ok: false, reason: 'credential identity' };
  }
  if (lifetime.notBefore !== DaveMls.LifetimeNotBefore || lifetime.notAfter !== DaveMls.LifetimeNotAfter) {
    return { ok: false, reason: 'lifetime' };
  }
  const cs = await daveCiphersuite();
  if (!(await verifyKeyPackage(keyPackage, cs.signature))) return { ok: false, reason: 'signature' };
  return { ok: true, keyPackage, ref: await makeKeyPackageRef(keyPackage, cs.hash) };
}

export interface CommitWelcome {
  groupId: Uint8Array;
  epoch: bigint;
  /** The committer's leaf index. */
  senderLeaf: number;
  /** Every proposal the commit names, by ref; `inline` counts proposals sent by value (never allowed). */
  refs: Uint8Array[];
  inline: number;
  /** The identity in the commit's new leaf node, when it has an UpdatePath. */
  pathIdentity: Uint8Array | undefined;
  /** The commit's MLSMessage bytes, forwarded as received. */
  commit: Uint8Array;
  welcome: Welcome | undefined;
}

/** Op 28: an MLSMessage PublicMessage commit, then a bare Welcome when members were added; undefined if malformed. */
export function parseCommitWelcome(bytes: Uint8Array): CommitWelcome | undefined {
  try {
    const decoded = decodeMlsMessage(bytes, 0);
    if (decoded === undefined) return undefined;
    const [message, end] = decoded; // read from offset 0, so the length read is the end
    if (message.wireformat !== 'mls_public_message') return undefined;
    const { content } = message.publicMessage;
    if (content.contentType !== 'commit' || content.sender.senderType !== 'member') return undefined;
    const commit: Commit = content.commit;
    let welcome: Welcome | undefined;
    if (end < bytes.length) {
      const decodedWelcome = decodeWelcome(bytes, end);
      // ts-mls decoders return how many bytes they read, not where they stopped.
      if (decodedWelcome === undefined || end + decodedWelcome[1] !== bytes.length) return undefined;
      welcome = decodedWelcome[0];
    }
    const refs: Uint8Array[] = [];
    let inline = 0;
    for (const item of commit.proposals) {
      if (item.proposalOrRefType === 'reference') refs.push(item.reference);
      else inline++;
    }
    const leaf = commit.path?.leafNode;
    return {
      groupId: content.groupId,
      epoch: content.epoch,
      senderLeaf: content.sender.leafIndex,
      refs,
      inline,
      pathIdentity: leaf?.credential.credentialType === 'basic' ? leaf.credential.identity : undefined,
      commit: bytes.subarray(0, end),
      welcome,
    };
  } catch {
    return undefined;
  }
}

/** The part of a Welcome one joiner may see: only the group secrets encrypted to its key package (protocol.md, op 30). */
export function welcomeFor(welcome: Welcome, keyPackageRef: Uint8Array): Uint8Array | undefined {
  const secrets = welcome.secrets.filter((secret) => bytesEqual(secret.newMember, keyPackageRef));
  if (secrets.length !== 1) return undefined;
  return encodeWelcome({ ...welcome, secrets });
}
