/** Images built byte by byte for the applications suites, not by the server's code. */

/** A 1×1 PNG (a well-known minimal file). */
export const PNG_BYTES = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

export const dataUri = (bytes: Buffer, type = 'image/png') =>
  `data:${type};base64,${bytes.toString('base64')}`;

export const PNG = dataUri(PNG_BYTES);

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

/**
 * The 1×1 PNG grown to exactly `size` bytes by a private ancillary chunk (`prVt`) before IEND, so the file
 * stays a valid PNG at any size from 57 bytes up; `seed` varies its bytes (distinct hashes).
 */
export function pngOfSize(size: number, seed = 0): Buffer {
  const iend = PNG_BYTES.subarray(PNG_BYTES.length - 12);
  const head = PNG_BYTES.subarray(0, PNG_BYTES.length - 12);
  const dataLength = size - head.length - iend.length - 12;
  if (dataLength < 0) throw new Error(`a PNG cannot be ${size} bytes`);
  const chunk = Buffer.alloc(12 + dataLength);
  chunk.writeUInt32BE(dataLength, 0);
  chunk.write('prVt', 4, 'latin1');
  chunk.fill(seed & 0xff, 8, 8 + dataLength);
  if (dataLength >= 4) chunk.writeUInt32BE(seed >>> 0, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + dataLength)), 8 + dataLength);
  return Buffer.concat([head, chunk, iend]);
}
