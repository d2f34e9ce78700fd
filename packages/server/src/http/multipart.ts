import { randomUUID } from 'node:crypto';
import { type FileHandle, mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { FormErrors, MAX_JSON_BODY_BYTES } from '@hearth/protocol';
import { HearthError, invalidForm } from '../kernel/errors.js';
import { assertJsonDepth } from '../kernel/input-limits.js';

/**
 * `multipart/form-data` bodies: the text fields, with `payload_json` standing for the whole body as the
 * platform reads it, and, on the routes that take them, `files[n]` parts streamed to temporary files.
 * The body is read chunk by chunk through a small state machine (no recursion, no whole-body buffer): memory
 * holds the text fields, a part's headers, one chunk and the first bytes of each file.
 */

/** What a route that takes files says about them (its `files` route config). */
export interface FileUploads {
  /** Where parts are written while the request runs; the route's owner moves or the server removes them. */
  readonly directory: string;
  readonly maxFiles: number;
  /** The whole body's limit on such a route (its files and `payload_json`); JSON bodies keep the default. */
  readonly maxBodyBytes: number;
  /** The largest file accepted now (a dated limit, asked once per request). */
  maxFileBytes(): number;
}

/** One `files[n]` part, on disk at `path` until its owner keeps it; removed after the response otherwise. */
export interface UploadedFile {
  /** `n` of `files[n]`: the attachment `id` of the body's `attachments` that describes it. */
  readonly index: number;
  readonly filename: string;
  /** The part's own Content-Type, if it had one. */
  readonly contentType: string | undefined;
  readonly size: number;
  readonly path: string;
  /** The file's first bytes (at most HEAD_BYTES), for the type and size of images. */
  readonly head: Buffer;
}

export interface MultipartBody {
  body: Record<string, unknown>;
  files: UploadedFile[];
}

export interface MultipartOptions {
  /** The whole body's limit; past it: 40005. */
  maxBodyBytes: number;
  /** Absent: a file part is refused (50035 at its name). */
  files?: FileUploads | undefined;
  /**
   * File parts read as text fields of the body, beside `payload_json` too (an invite's
   * `target_users_file`); they count against the text fields' limit.
   */
  textFiles?: readonly string[] | undefined;
}

/** Kept in memory of each file: enough for an image's header (a JPEG's frame header may follow its EXIF). */
export const HEAD_BYTES = 256 * 1024;
/** Text fields together (`payload_json` included) are held in memory: as much as a JSON body. */
const MAX_TEXT_BYTES = MAX_JSON_BODY_BYTES;
/** A part's header block; real clients send well under 1 KiB. */
const MAX_PART_HEADER_BYTES = 16 * 1024;
const FILE_FIELD = /^files\[(\d{1,9})\]$/;

/**
 * Reads a multipart body from its chunks. Bad input never stops the read half way: the rest of the body is
 * drained (within `maxBodyBytes`) so that the client reads the error instead of a reset, and every file
 * written so far is removed before the error is thrown.
 */
export async function readMultipart(
  chunks: AsyncIterable<Buffer>,
  contentType: string,
  options: MultipartOptions,
): Promise<MultipartBody> {
  const reader = new FormReader(scannerFor(contentType), options);
  try {
    let received = 0;
    for await (const chunk of chunks) {
      received += chunk.length;
      if (received > options.maxBodyBytes) throw new HearthError('RequestEntityTooLarge');
      await reader.write(chunk);
    }
    return await reader.finish();
  } catch (error) {
    await reader.discard();
    throw error;
  }
}

function scannerFor(contentType: string): PartScanner {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const marker = boundary?.[1] ?? boundary?.[2]?.trim();
  if (!marker || marker.length > 70) throw malformed();
  return new PartScanner(marker);
}

function malformed(): HearthError {
  return new HearthError('InvalidFormBody', { errors: { _errors: [FormErrors.invalid()] } });
}

// ---- Parts: the text fields and the files of one body ----

/** The text fields in arrival order; the body is `payload_json` when there is one, else the fields. */
class TextFields {
  #fields: Record<string, string> = Object.create(null);
  #files: Record<string, string> = Object.create(null);
  #current: { name: string; chunks: Buffer[]; file: boolean } | undefined;
  #bytes = 0;

  begin(name: string, file = false): void {
    this.#current = { name, chunks: [], file };
  }

  add(event: DataEvent | EndEvent): void {
    const current = this.#current;
    if (!current) return;
    if (event.kind === 'data') {
      this.#bytes += event.bytes.length;
      if (this.#bytes > MAX_TEXT_BYTES) throw new HearthError('RequestEntityTooLarge');
      current.chunks.push(event.bytes);
      return;
    }
    (current.file ? this.#files : this.#fields)[current.name] = Buffer.concat(current.chunks).toString(
      'utf8',
    );
    this.#current = undefined;
  }

  body(): Record<string, unknown> {
    const payload = this.#fields['payload_json'];
    if (payload === undefined) return { ...this.#fields, ...this.#files };
    assertJsonDepth(payload);
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      throw new HearthError('InvalidJSON');
    }
    const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
    return isObject && Object.keys(this.#files).length > 0
      ? { ...(body as Record<string, unknown>), ...this.#files }
      : (body as Record<string, unknown>);
  }
}

interface OpenFile {
  index: number;
  filename: string;
  contentType: string | undefined;
  path: string;
  handle: FileHandle;
  size: number;
  head: Buffer[];
  headBytes: number;
}

/**
 * Turns the scanner's events into text fields and temporary files. The first error is kept and the body
 * read on, so that `finish` throws it once the client has sent everything.
 */
class FormReader {
  readonly #scanner: PartScanner;
  readonly #uploads: FileUploads | undefined;
  readonly #textFiles: readonly string[];
  readonly #maxFileBytes: number;
  readonly #text = new TextFields();
  readonly #files: UploadedFile[] = [];
  readonly #indexes = new Set<number>();
  #open: OpenFile | undefined;
  #error: unknown;
  #directoryReady = false;

  constructor(scanner: PartScanner, options: MultipartOptions) {
    this.#scanner = scanner;
    this.#uploads = options.files;
    this.#textFiles = options.textFiles ?? [];
    this.#maxFileBytes = options.files?.maxFileBytes() ?? 0;
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.#error !== undefined) return;
    try {
      for (const event of this.#scanner.write(chunk)) await this.#handle(event);
    } catch (error) {
      await this.#fail(error);
    }
  }

  async finish(): Promise<MultipartBody> {
    if (this.#error === undefined) {
      try {
        for (const event of this.#scanner.finish()) await this.#handle(event);
      } catch (error) {
        await this.#fail(error);
      }
    }
    if (this.#error !== undefined) throw this.#error;
    return { body: this.#text.body(), files: this.#files };
  }

  /** Closes and removes every file of this body. */
  async discard(): Promise<void> {
    await this.#closeOpen(true);
    await Promise.all(this.#files.map((file) => rm(file.path, { force: true })));
    this.#files.length = 0;
  }

  async #fail(error: unknown): Promise<void> {
    this.#error = error;
    await this.discard();
  }

  async #handle(event: PartEvent): Promise<void> {
    if (event.kind === 'begin') return this.#begin(event.part);
    const file = this.#open;
    if (!file) return this.#text.add(event);
    if (event.kind === 'end') return this.#closeOpen(false);
    file.size += event.bytes.length;
    if (file.size > this.#maxFileBytes) throw new HearthError('RequestEntityTooLarge');
    if (file.headBytes < HEAD_BYTES) {
      const kept = event.bytes.subarray(0, HEAD_BYTES - file.headBytes);
      file.head.push(Buffer.from(kept));
      file.headBytes += kept.length;
    }
    // writeFile on a handle writes at its position and loops until every byte is written.
    await file.handle.writeFile(event.bytes);
  }

  async #begin(part: PartHead): Promise<void> {
    if (part.filename === undefined) return this.#text.begin(part.name);
    if (this.#textFiles.includes(part.name)) return this.#text.begin(part.name, true);
    const uploads = this.#uploads;
    const index = Number(FILE_FIELD.exec(part.name)?.[1] ?? Number.NaN);
    if (!uploads || Number.isNaN(index) || this.#indexes.has(index)) {
      throw invalidForm(part.name, FormErrors.invalid());
    }
    if (this.#files.length >= uploads.maxFiles) {
      throw invalidForm('attachments', FormErrors.maxItems(uploads.maxFiles));
    }
    this.#indexes.add(index);
    if (!this.#directoryReady) {
      await mkdir(uploads.directory, { recursive: true });
      this.#directoryReady = true;
    }
    const path = join(uploads.directory, `${randomUUID()}.part`);
    const handle = await open(path, 'wx');
    this.#open = {
      index,
      filename: part.filename,
      contentType: part.contentType,
      path,
      handle,
      size: 0,
      head: [],
      headBytes: 0,
    };
  }

  async #closeOpen(remove: boolean): Promise<void> {
    const file = this.#open;
    if (!file) return;
    this.#open = undefined;
    await file.handle.close();
    if (remove) {
      await rm(file.path, { force: true });
      return;
    }
    this.#files.push({
      index: file.index,
      filename: file.filename,
      contentType: file.contentType,
      size: file.size,
      path: file.path,
      head: Buffer.concat(file.head),
    });
  }
}

// ---- The scanner: RFC 7578 parts, one chunk at a time ----

interface PartHead {
  name: string;
  filename: string | undefined;
  contentType: string | undefined;
}
interface BeginEvent {
  kind: 'begin';
  part: PartHead;
}
interface DataEvent {
  kind: 'data';
  bytes: Buffer;
}
interface EndEvent {
  kind: 'end';
}
type PartEvent = BeginEvent | DataEvent | EndEvent;

type ScanState = 'preamble' | 'delimiter' | 'headers' | 'content' | 'done';

/**
 * Finds the parts between `--boundary` lines. Only the bytes that could still be the start of a delimiter
 * are held back between chunks; everything before them is handed on as the part's content at once.
 */
class PartScanner {
  /** The first delimiter may open the body; every later one follows a CRLF that belongs to it. */
  readonly #first: Buffer;
  readonly #delimiter: Buffer;
  #state: ScanState = 'preamble';
  #buffer: Buffer = Buffer.alloc(0);

  constructor(boundary: string) {
    this.#first = Buffer.from(`--${boundary}`);
    this.#delimiter = Buffer.from(`\r\n--${boundary}`);
  }

  write(chunk: Buffer): PartEvent[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const events: PartEvent[] = [];
    while (this.#step(events)) {
      // Each step consumes input or emits an event; it answers false when it needs more bytes.
    }
    return events;
  }

  /** The body ended: anything but a closed last part is malformed. */
  finish(): PartEvent[] {
    if (this.#state !== 'done') throw malformed();
    return [];
  }

  #step(events: PartEvent[]): boolean {
    const buffer = this.#buffer;
    switch (this.#state) {
      case 'preamble': {
        const at = buffer.indexOf(this.#first);
        if (at === -1) {
          // The preamble is ignored; keep only what could be the delimiter's beginning.
          this.#buffer = buffer.subarray(Math.max(0, buffer.length - this.#first.length + 1));
          return false;
        }
        this.#buffer = buffer.subarray(at + this.#first.length);
        this.#state = 'delimiter';
        return true;
      }
      case 'delimiter': {
        if (buffer.length < 2) return false;
        const after = buffer.toString('latin1', 0, 2);
        if (after === '--') {
          this.#state = 'done';
          this.#buffer = Buffer.alloc(0);
          return false;
        }
        if (after !== '\r\n') throw malformed();
        this.#buffer = buffer.subarray(2);
        this.#state = 'headers';
        return true;
      }
      case 'headers': {
        const end = buffer.indexOf('\r\n\r\n');
        if (end === -1) {
          if (buffer.length > MAX_PART_HEADER_BYTES) throw malformed();
          return false;
        }
        events.push({ kind: 'begin', part: partHead(buffer.toString('utf8', 0, end)) });
        this.#buffer = buffer.subarray(end + 4);
        this.#state = 'content';
        return true;
      }
      case 'content': {
        const at = buffer.indexOf(this.#delimiter);
        if (at === -1) {
          const safe = buffer.length - this.#delimiter.length + 1;
          if (safe <= 0) return false;
          events.push({ kind: 'data', bytes: buffer.subarray(0, safe) });
          this.#buffer = buffer.subarray(safe);
          return false;
        }
        if (at > 0) events.push({ kind: 'data', bytes: buffer.subarray(0, at) });
        events.push({ kind: 'end' });
        this.#buffer = buffer.subarray(at + this.#delimiter.length);
        this.#state = 'delimiter';
        return true;
      }
      case 'done':
        // The epilogue is ignored.
        this.#buffer = Buffer.alloc(0);
        return false;
    }
  }
}

function partHead(headers: string): PartHead {
  const disposition = /content-disposition:\s*form-data\s*;([^\r\n]*)/i.exec(headers)?.[1] ?? '';
  const name = /(?:^|;)\s*name="([^"]*)"/i.exec(disposition)?.[1];
  if (name === undefined) throw malformed();
  const type = /(?:^|\r\n)content-type:\s*([^\r\n]*)/i.exec(headers)?.[1]?.trim();
  return { name, filename: filenameOf(disposition), contentType: type || undefined };
}

/** `filename*=UTF-8''…` (RFC 5987) wins over `filename="…"`; browsers and undici send the latter raw UTF-8. */
function filenameOf(disposition: string): string | undefined {
  const extended = /(?:^|;)\s*filename\*=\s*([\w-]*)'[^']*'([^;]*)/.exec(disposition);
  if (extended) {
    if (extended[1]?.toLowerCase() !== 'utf-8') throw malformed();
    try {
      return decodeURIComponent(extended[2]!.trim());
    } catch {
      throw malformed();
    }
  }
  const quoted = /(?:^|;)\s*filename="((?:[^"\\]|\\.)*)"/i.exec(disposition)?.[1];
  if (quoted !== undefined) return quoted.replace(/\\(.)/g, '$1');
  return /(?:^|;)\s*filename=([^;\s]+)/i.exec(disposition)?.[1];
}
