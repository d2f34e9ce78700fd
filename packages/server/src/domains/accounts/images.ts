import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { FormErrors, UserImageLimits } from '@hearth/protocol';
import { invalidForm } from '../../kernel/errors.js';

/**
 * Image data of avatars and banners (`data:image/{type};base64,{data}`): checked as the platform checks
 * it, by the bytes rather than by what the URI claims, and hashed for the CDN-style URLs.
 */
export type ImageType = (typeof UserImageLimits.types)[number];

export interface Image {
  type: ImageType;
  bytes: Buffer;
  /** Hex MD5 of the bytes; `a_` first for an animated GIF, as the platform marks animated hashes. */
  hash: string;
}

const DATA_URI = /^data:(image\/[a-z]+);base64,([A-Za-z0-9+/]*={0,2})$/;

/** The image of a data URI, or 50035 at `field` (wrong type, bad base64, too large, bytes of another type). */
export function parseImageData(
  field: string,
  value: string,
  maxBytes: number = UserImageLimits.maxBytes,
): Image {
  const match = DATA_URI.exec(value);
  const type = match?.[1] as ImageType | undefined;
  const base64 = match?.[2] ?? '';
  if (!type || !(UserImageLimits.types as readonly string[]).includes(type) || base64.length % 4 !== 0) {
    throw invalidForm(field, FormErrors.imageInvalid());
  }
  // Checked before decoding: 3 bytes per 4 characters, less the padding.
  const size = (base64.length / 4) * 3 - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);
  if (size > maxBytes) throw invalidForm(field, FormErrors.imageTooLarge(maxBytes));
  const bytes = Buffer.from(base64, 'base64');
  const frames = CHECKS[type](bytes);
  if (frames === undefined || frames < 1) throw invalidForm(field, FormErrors.imageInvalid());
  const md5 = createHash('md5').update(bytes).digest('hex');
  return { type, bytes, hash: type === 'image/gif' && frames > 1 ? `a_${md5}` : md5 };
}

/** Each type's structural check: the number of frames, or undefined when the bytes are not that image. */
const CHECKS: Record<ImageType, (bytes: Buffer) => number | undefined> = {
  'image/png': checkPng,
  'image/jpeg': checkJpeg,
  'image/gif': checkGif,
  'image/webp': checkWebp,
};

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Signature, then chunks with valid CRCs: IHDR first with a non-empty size, IDAT, IEND last. */
function checkPng(bytes: Buffer): number | undefined {
  if (!bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return undefined;
  let offset = 8;
  let first = true;
  let data = false;
  while (offset + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const end = offset + 12 + length;
    if (end > bytes.length) return undefined;
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    if (crc32(bytes.subarray(offset + 4, offset + 8 + length)) !== bytes.readUInt32BE(end - 4))
      return undefined;
    if (first) {
      if (type !== 'IHDR' || length !== 13) return undefined;
      if (bytes.readUInt32BE(offset + 8) === 0 || bytes.readUInt32BE(offset + 12) === 0) return undefined;
      first = false;
    }
    if (type === 'IDAT') data = true;
    if (type === 'IEND') return data && end === bytes.length ? 1 : undefined;
    offset = end;
  }
  return undefined;
}

/** SOI, segments up to a start-of-frame with a non-empty size, and EOI at the end. */
function checkJpeg(bytes: Buffer): number | undefined {
  if (bytes.length < 4 || bytes[bytes.length - 2] !== 0xff || bytes[bytes.length - 1] !== 0xd9)
    return undefined;
  const frame = jpegFrame(bytes);
  return frame && frame.width > 0 && frame.height > 0 ? 1 : undefined;
}

/** The start-of-frame's size, walking the segments after SOI; undefined when `bytes` end before it. */
function jpegFrame(bytes: Buffer): { width: number; height: number } | undefined {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined;
  let offset = 2;
  while (offset + 4 <= bytes.length) {
    if (bytes[offset] !== 0xff) return undefined;
    const marker = bytes[offset + 1]!;
    if (marker === 0xff) {
      offset += 1;
      continue;
    }
    const length = bytes.readUInt16BE(offset + 2);
    if (length < 2 || offset + 2 + length > bytes.length) return undefined;
    // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC): precision, height, width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (length < 8) return undefined;
      return { height: bytes.readUInt16BE(offset + 5), width: bytes.readUInt16BE(offset + 7) };
    }
    if (marker === 0xda) return undefined;
    offset += 2 + length;
  }
  return undefined;
}

/** Header, screen, then blocks to the trailer; answers the number of frames (more than one: animated). */
function checkGif(bytes: Buffer): number | undefined {
  const header = bytes.toString('latin1', 0, 6);
  if ((header !== 'GIF87a' && header !== 'GIF89a') || bytes.length < 14) return undefined;
  if (bytes.readUInt16LE(6) === 0 || bytes.readUInt16LE(8) === 0) return undefined;
  let offset = 13 + colorTableSize(bytes[10]!);
  let frames = 0;
  const subBlocks = (): boolean => {
    for (;;) {
      if (offset >= bytes.length) return false;
      const size = bytes[offset]!;
      offset += 1 + size;
      if (size === 0) return offset <= bytes.length;
    }
  };
  while (offset < bytes.length) {
    const block = bytes[offset];
    if (block === 0x3b) return frames > 0 ? frames : undefined;
    if (block === 0x21) {
      offset += 2;
      if (!subBlocks()) return undefined;
    } else if (block === 0x2c) {
      if (offset + 10 > bytes.length) return undefined;
      offset += 10 + colorTableSize(bytes[offset + 9]!) + 1;
      if (!subBlocks()) return undefined;
      frames++;
    } else {
      return undefined;
    }
  }
  return undefined;
}

function colorTableSize(packed: number): number {
  return packed & 0x80 ? 3 * 2 ** ((packed & 0x07) + 1) : 0;
}

/** RIFF with the file's own length, the WEBP form, and a first chunk of a WebP bitstream. */
function checkWebp(bytes: Buffer): number | undefined {
  if (bytes.length < 20 || bytes.toString('latin1', 0, 4) !== 'RIFF') return undefined;
  if (bytes.toString('latin1', 8, 12) !== 'WEBP' || bytes.readUInt32LE(4) + 8 !== bytes.length)
    return undefined;
  const chunk = bytes.toString('latin1', 12, 16);
  if (chunk !== 'VP8 ' && chunk !== 'VP8L' && chunk !== 'VP8X') return undefined;
  return 20 + bytes.readUInt32LE(16) <= bytes.length ? 1 : undefined;
}

// ---- Sizes from the first bytes (message attachments) ----

export interface ImageSize {
  type: ImageType;
  width: number;
  height: number;
}

/**
 * The type and pixel size of an image from its first bytes (a file's head, not the whole file): the PNG
 * IHDR, the GIF screen, the WebP VP8/VP8L/VP8X header, the JPEG start-of-frame. Undefined for anything else.
 */
export function imageSize(head: Buffer): ImageSize | undefined {
  const size = sniffSize(head);
  return size && size.width > 0 && size.height > 0 ? size : undefined;
}

function sniffSize(head: Buffer): ImageSize | undefined {
  if (head.length >= 24 && head.subarray(0, 8).equals(PNG_SIGNATURE)) {
    if (head.toString('latin1', 12, 16) !== 'IHDR') return undefined;
    return { type: 'image/png', width: head.readUInt32BE(16), height: head.readUInt32BE(20) };
  }
  const gif = head.toString('latin1', 0, 6);
  if ((gif === 'GIF87a' || gif === 'GIF89a') && head.length >= 10) {
    return { type: 'image/gif', width: head.readUInt16LE(6), height: head.readUInt16LE(8) };
  }
  if (
    head.length >= 30 &&
    head.toString('latin1', 0, 4) === 'RIFF' &&
    head.toString('latin1', 8, 12) === 'WEBP'
  ) {
    return webpSize(head);
  }
  const jpeg = jpegFrame(head);
  return jpeg && { type: 'image/jpeg', ...jpeg };
}

/** The three WebP bitstreams (RFC 9649): lossy key frame, lossless signature, extended canvas. */
function webpSize(head: Buffer): ImageSize | undefined {
  const chunk = head.toString('latin1', 12, 16);
  if (chunk === 'VP8 ' && head[23] === 0x9d && head[24] === 0x01 && head[25] === 0x2a) {
    return {
      type: 'image/webp',
      width: head.readUInt16LE(26) & 0x3fff,
      height: head.readUInt16LE(28) & 0x3fff,
    };
  }
  if (chunk === 'VP8L' && head[20] === 0x2f) {
    const bits = head.readUInt32LE(21);
    return { type: 'image/webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') {
    return { type: 'image/webp', width: head.readUIntLE(24, 3) + 1, height: head.readUIntLE(27, 3) + 1 };
  }
  return undefined;
}

// ---- PNG writing (default avatars) ----

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A `side`×`side` PNG of one colour: a one-entry palette at one bit per pixel, so 4096 px stays small. */
export function solidPng(side: number, rgb: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([1, 3, 0, 0, 0], 8); // bit depth 1, palette, deflate, adaptive filter, no interlace
  const palette = Buffer.from([(rgb >> 16) & 0xff, (rgb >> 8) & 0xff, rgb & 0xff]);
  // Each row: filter 0, then ceil(side / 8) bytes of palette index 0.
  const pixels = Buffer.alloc(side * (1 + Math.ceil(side / 8)));
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk('IHDR', header),
    chunk('PLTE', palette),
    chunk('IDAT', deflateSync(pixels)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
