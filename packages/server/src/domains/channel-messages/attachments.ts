import type { ReadStream } from 'node:fs';
import {
  AttachmentFlags,
  FormErrors,
  isInEffect,
  Limits,
  MAX_JSON_BODY_BYTES,
  MessageLimits,
  SPOILER_FILENAME_PREFIX,
} from '@hearth/protocol';
import type { FileUploads, UploadedFile } from '../../http/multipart.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Executor } from '../../storage/database.js';
import { imageSize } from '../accounts/images.js';
import type { AttachmentFiles } from './attachment-files.js';
import { type AttachmentRequest, AttachmentsField } from './attachments-schemas.js';
import type { AttachmentRow, NewAttachmentRow } from './attachments-store.js';
import * as store from './attachments-store.js';

/** The attachment object (GUILDS.md §4.8; OAS `MessageAttachmentResponse`). */
export type AttachmentObject = {
  id: string;
  filename: string;
  title?: string;
  description?: string;
  content_type?: string;
  size: number;
  url: string;
  proxy_url: string;
  width?: number;
  height?: number;
  flags?: number;
};

/**
 * What a create or an edit does to a message's attachments: rows to insert (their files still uploads),
 * attachments kept in their new order, and the ones dropped. Made before the transaction, applied inside it
 * (`save`), and its files moved or removed once it committed (`settle`).
 */
export interface AttachmentPlan {
  readonly added: readonly { row: Omit<NewAttachmentRow, 'message_id'>; upload: string }[];
  readonly kept: readonly { row: AttachmentRow; position: number }[];
  readonly removed: readonly AttachmentRow[];
  /** Whether the message's attachments change at all (an edit without `attachments` or files keeps them). */
  readonly changed: boolean;
}

export interface AttachmentsDeps {
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  files: AttachmentFiles;
  /** The address clients reach this server at, for `url` and `proxy_url`. */
  publicUrl: () => string;
}

/**
 * A message body with files: ten files at the largest per-file limit there has been (25 MiB), the JSON
 * payload, and room for the parts' headers and boundaries.
 */
export const MESSAGE_BODY_BYTES =
  MessageLimits.attachmentsMax * Limits.fileUploadBytesBefore20250116 + MAX_JSON_BODY_BYTES + 64 * 1024;

/** A file's name as stored: no directories, no characters that need quoting in a URL path. */
const UNSAFE_FILENAME = /[\s/\\:*?"<>|#%&{}^~[\]`\p{Cc}]/gu;
const FILE_INDEX = /^\d{1,9}$/;
/** Types by extension, for files that are not an image Hearth can read and came without a type. */
const TYPES_BY_EXTENSION: Readonly<Record<string, string>> = {
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  pdf: 'application/pdf',
  zip: 'application/zip',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

/**
 * Message attachments (GUILDS.md §4.8): files of `files[n]` parts described by the body's `attachments`,
 * stored on disk, served back at their `url`. The per-file limit is the dated one (10 MiB from 16 January
 * 2025, 25 MiB before) on the injected clock.
 */
export class Attachments {
  readonly #deps: AttachmentsDeps;
  /** The route config of the message routes that take files. */
  readonly uploads: FileUploads;

  constructor(deps: AttachmentsDeps) {
    this.#deps = deps;
    this.uploads = {
      directory: deps.files.uploads,
      maxFiles: MessageLimits.attachmentsMax,
      maxBodyBytes: MESSAGE_BODY_BYTES,
      maxFileBytes: () => this.maxFileBytes(),
    };
  }

  maxFileBytes(): number {
    return isInEffect('fileUploadLimit10MiB', this.#deps.clock.now())
      ? Limits.fileUploadBytes
      : Limits.fileUploadBytesBefore20250116;
  }

  /**
   * The plan of a message's attachments from its uploads and the body's `attachments` (undefined or null:
   * every upload, after every existing attachment). An entry's `id` names `files[n]`, else an existing
   * attachment to keep; uploads no entry names come last, in their `n` order.
   */
  plan(
    channelId: string,
    uploads: readonly UploadedFile[],
    requested: unknown,
    existing: readonly AttachmentRow[] = [],
  ): AttachmentPlan {
    const entries =
      parse(AttachmentsField, requested === undefined ? {} : { attachments: requested }).attachments ??
      undefined;
    const byIndex = new Map(uploads.map((upload) => [upload.index, upload]));
    const existingById = new Map(existing.map((row) => [row.id, row]));
    // The message's attachments in their new order: an existing row kept, or an upload and its entry.
    const order: (AttachmentRow | [UploadedFile, AttachmentRequest | undefined])[] = [];
    const seen = new Set<string>();
    for (const [i, entry] of (entries ?? []).entries()) {
      const id = String(entry.id);
      const upload = FILE_INDEX.test(id) ? byIndex.get(Number(id)) : undefined;
      const row = upload ? undefined : existingById.get(id);
      if (seen.has(id) || (!upload && !row)) throw invalidForm(`attachments.${i}.id`, FormErrors.invalid());
      seen.add(id);
      order.push(upload ? [upload, entry] : row!);
    }
    if (!entries) order.push(...existing);
    const unnamed = uploads.filter((upload) => !seen.has(String(upload.index)));
    for (const upload of unnamed.sort((a, b) => a.index - b.index)) order.push([upload, undefined]);
    if (order.length > MessageLimits.attachmentsMax) {
      throw invalidForm('attachments', FormErrors.maxItems(MessageLimits.attachmentsMax));
    }
    const added: AttachmentPlan['added'][number][] = [];
    const kept: AttachmentPlan['kept'][number][] = [];
    for (const [position, item] of order.entries()) {
      if (Array.isArray(item)) {
        const [upload, entry] = item;
        added.push({ row: this.#row(channelId, upload, entry, position), upload: upload.path });
      } else {
        kept.push({ row: item, position });
      }
    }
    const keptIds = new Set(kept.map(({ row }) => row.id));
    return {
      added,
      kept,
      removed: existing.filter((row) => !keptIds.has(row.id)),
      changed: entries !== undefined || uploads.length > 0,
    };
  }

  /** Applies a plan in the message's transaction. */
  async save(db: Executor, messageId: string, plan: AttachmentPlan): Promise<void> {
    if (!plan.changed) return;
    await store.deleteAttachments(
      db,
      plan.removed.map((row) => row.id),
    );
    await store.reorderAttachments(db, plan.kept);
    await store.insertAttachments(
      db,
      plan.added.map(({ row }) => ({ ...row, message_id: messageId })),
    );
  }

  /** After the commit: uploads move to their keys, dropped attachments' files go. */
  async settle(plan: AttachmentPlan): Promise<void> {
    for (const { row, upload } of plan.added) await this.#deps.files.place(upload, row.storage_key);
    await this.removeFiles(plan.removed.map((row) => row.storage_key));
  }

  /** The attachment objects a message will have once its plan is saved: what `attachment://` names. */
  plannedObjects(plan: AttachmentPlan): AttachmentObject[] {
    const rows: { row: Omit<NewAttachmentRow, 'message_id'>; position: number }[] = [
      ...plan.kept,
      ...plan.added.map(({ row }) => ({ row, position: row.position ?? 0 })),
    ];
    return rows
      .sort((a, b) => a.position - b.position)
      .map(({ row, position }) =>
        this.toObject({
          title: null,
          description: null,
          content_type: null,
          width: null,
          height: null,
          duration_secs: null,
          waveform: null,
          ...row,
          message_id: null,
          interaction_id: null,
          position,
          flags: row.flags ?? 0,
        }),
      );
  }

  /**
   * Files a user sent with an interaction, stored in its transaction: no message holds them, their `url`
   * serves them all the same (DOCS Resolved Data: `attachments`).
   */
  async saveForInteraction(db: Executor, interactionId: string, plan: AttachmentPlan): Promise<void> {
    await store.insertAttachments(
      db,
      plan.added.map(({ row }) => ({ ...row, message_id: null, interaction_id: interactionId })),
    );
  }

  /** The stored attachments of a message (for an edit's plan). */
  rows(db: Executor, messageId: string): Promise<AttachmentRow[]> {
    return store.messagesAttachments(db, [messageId]);
  }

  /** The attachment objects of these messages, by message id (every id present, in order). */
  async objectsOf(db: Executor, messageIds: readonly string[]): Promise<Map<string, AttachmentObject[]>> {
    const byMessage = new Map<string, AttachmentObject[]>(messageIds.map((id) => [id, []]));
    for (const row of await store.messagesAttachments(db, messageIds)) {
      byMessage.get(row.message_id ?? '')?.push(this.toObject(row));
    }
    return byMessage;
  }

  /** Deletes these messages' attachments in their transaction; answers the keys for `removeFiles`. */
  deleteForMessages(db: Executor, messageIds: readonly string[]): Promise<string[]> {
    return store.deleteMessagesAttachments(db, messageIds);
  }

  /**
   * Inside a channel's deletion (which has no after-commit step): its attachments' rows, then their
   * files. Should that transaction still fail, the rows stay and their `url` answers 404.
   */
  async channelDeleted(db: Executor, channelId: string): Promise<void> {
    await this.removeFiles(await store.deleteChannelAttachments(db, channelId));
  }

  /** After the commit of a delete: the files go. */
  removeFiles(keys: readonly string[]): Promise<void> {
    return this.#deps.files.remove(keys);
  }

  toObject(row: AttachmentRow): AttachmentObject {
    const url = `${this.#deps.publicUrl()}/attachments/${row.channel_id}/${row.id}/${encodeURIComponent(row.filename)}`;
    return {
      id: row.id,
      filename: row.filename,
      ...(row.title !== null ? { title: row.title } : {}),
      ...(row.description !== null ? { description: row.description } : {}),
      ...(row.content_type !== null ? { content_type: row.content_type } : {}),
      size: Number(row.size),
      url,
      proxy_url: url,
      ...(row.width !== null && row.height !== null ? { width: row.width, height: row.height } : {}),
      ...(row.flags !== 0 ? { flags: row.flags } : {}),
    };
  }

  /** The bytes at an attachment's `url`; the file name must be the attachment's, as on the platform's CDN. */
  async open(
    db: Executor,
    channelId: string,
    attachmentId: string,
    filename: string,
  ): Promise<{ row: AttachmentRow; stream: ReadStream; size: number }> {
    const row = await store.findAttachment(db, channelId, attachmentId);
    const file = row && row.filename === filename ? await this.#deps.files.open(row.storage_key) : undefined;
    if (!row || !file) throw new HearthError('GeneralNotFound');
    return { row, ...file };
  }

  #row(
    channelId: string,
    upload: UploadedFile,
    entry: AttachmentRequest | undefined,
    position: number,
  ): Omit<NewAttachmentRow, 'message_id'> {
    const id = this.#deps.snowflakes.next();
    const filename = storedFilename(entry?.filename ?? upload.filename);
    if (!filename) throw invalidForm(`files[${upload.index}]`, FormErrors.invalid());
    if (filename.length > MessageLimits.filenameMax) {
      throw invalidForm(`files[${upload.index}]`, FormErrors.maxLength(MessageLimits.filenameMax));
    }
    const image = imageSize(upload.head);
    const spoiler = entry?.is_spoiler === true || filename.startsWith(SPOILER_FILENAME_PREFIX);
    return {
      id,
      channel_id: channelId,
      position,
      filename,
      title: entry?.title ?? null,
      description: entry?.description ?? null,
      content_type: image?.type ?? declaredType(upload.contentType) ?? typeByExtension(filename) ?? null,
      size: upload.size,
      width: image?.width ?? null,
      height: image?.height ?? null,
      duration_secs: null,
      waveform: null,
      flags: spoiler ? AttachmentFlags.IsSpoiler : 0,
      storage_key: `${channelId}/${id}`,
      created_at: this.#deps.clock.now(),
    };
  }
}

/** The last path segment, with spaces and URL-unsafe characters as `_` (the platform does the same). */
function storedFilename(raw: string): string {
  const base = raw.split(/[/\\]/).pop() ?? '';
  return base.replace(UNSAFE_FILENAME, '_');
}

/** A part's own type, unless it is the "no idea" type every client sends for raw bytes. */
function declaredType(type: string | undefined): string | undefined {
  const value = type?.trim().toLowerCase();
  return value && value !== 'application/octet-stream' && /^[\w.+-]+\/[\w.+-]+/.test(value)
    ? value
    : undefined;
}

function typeByExtension(filename: string): string | undefined {
  const dot = filename.lastIndexOf('.');
  return dot === -1 ? undefined : TYPES_BY_EXTENSION[filename.slice(dot + 1).toLowerCase()];
}
