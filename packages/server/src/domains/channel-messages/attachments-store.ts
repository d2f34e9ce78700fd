import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { MessageAttachmentsTable } from '../../storage/schema.js';

export type AttachmentRow = Selectable<MessageAttachmentsTable>;
export type NewAttachmentRow = Insertable<MessageAttachmentsTable>;

export async function insertAttachments(db: Executor, rows: readonly NewAttachmentRow[]): Promise<void> {
  if (rows.length > 0)
    await db
      .insertInto('message_attachments')
      .values([...rows])
      .execute();
}

/** The attachments of these messages, each message's in its order. */
export function messagesAttachments(db: Executor, messageIds: readonly string[]): Promise<AttachmentRow[]> {
  if (messageIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('message_attachments')
    .selectAll()
    .where('message_id', 'in', [...messageIds])
    .orderBy('message_id')
    .orderBy('position')
    .execute();
}

export function findAttachment(
  db: Executor,
  channelId: string,
  attachmentId: string,
): Promise<AttachmentRow | undefined> {
  return db
    .selectFrom('message_attachments')
    .selectAll()
    .where('id', '=', attachmentId)
    .where('channel_id', '=', channelId)
    .where((eb) => eb.or([eb('message_id', 'is not', null), eb('interaction_id', 'is not', null)]))
    .executeTakeFirst();
}

/** Gives the kept attachments of an edited message their new places. */
export async function reorderAttachments(
  db: Executor,
  kept: readonly { row: { id: string; position: number }; position: number }[],
): Promise<void> {
  for (const { row, position } of kept) {
    if (row.position !== position) {
      await db.updateTable('message_attachments').set({ position }).where('id', '=', row.id).execute();
    }
  }
}

export async function deleteAttachments(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length > 0)
    await db
      .deleteFrom('message_attachments')
      .where('id', 'in', [...ids])
      .execute();
}

/** Deletes the attachments of these messages; answers the storage keys of their files. */
export async function deleteMessagesAttachments(
  db: Executor,
  messageIds: readonly string[],
): Promise<string[]> {
  if (messageIds.length === 0) return [];
  const rows = await db
    .selectFrom('message_attachments')
    .select('storage_key')
    .where('message_id', 'in', [...messageIds])
    .execute();
  await db
    .deleteFrom('message_attachments')
    .where('message_id', 'in', [...messageIds])
    .execute();
  return rows.map((row) => row.storage_key);
}

/** Deletes the attachments of a whole channel (its deletion); answers the storage keys of their files. */
export async function deleteChannelAttachments(db: Executor, channelId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('message_attachments')
    .select('storage_key')
    .where('channel_id', '=', channelId)
    .execute();
  await db.deleteFrom('message_attachments').where('channel_id', '=', channelId).execute();
  return rows.map((row) => row.storage_key);
}
