/**
 * The message-content rule (GUILDS.md §4.1, §7.1 intent 15): an app without message-content access reads
 * a message with `content`, `embeds`, `attachments` and `components` empty (and no `poll`), except in
 * DMs, in its own messages and in messages that mention it. People always read everything. The gateway
 * applies it per session (the MESSAGE_CONTENT intent); REST per application (its approval flags).
 */

/** A reader of messages: a bot user, and whether its app may read content. */
export interface ContentReader {
  userId: string;
  bot: boolean;
  /** The intent on a gateway session; the approval flag over REST. */
  contentAccess: boolean;
}

/** The fields of a message (as on the wire) the rule looks at. */
interface Readable {
  guild_id?: unknown;
  author?: { id?: unknown } | unknown;
  mentions?: unknown;
}

const PRIVILEGED_FIELDS = { content: '', embeds: [], attachments: [], components: [] } as const;

/** Whether `reader` sees the content of a message (of a guild channel when `inGuild`). */
export function readsContent(reader: ContentReader, message: Readable, inGuild: boolean): boolean {
  if (!reader.bot || reader.contentAccess || !inGuild) return true;
  if ((message.author as { id?: unknown } | undefined)?.id === reader.userId) return true;
  const mentions = message.mentions;
  return Array.isArray(mentions) && mentions.some((user: { id?: unknown }) => user?.id === reader.userId);
}

/** The message as `reader` reads it: the same object when allowed, else a copy with the fields emptied. */
export function asReadBy<T extends object>(reader: ContentReader, message: T, inGuild: boolean): T {
  if (readsContent(reader, message as Readable, inGuild)) return message;
  const stripped = { ...message } as Record<string, unknown>;
  for (const [key, empty] of Object.entries(PRIVILEGED_FIELDS)) if (key in stripped) stripped[key] = empty;
  delete stripped['poll'];
  return stripped as unknown as T;
}
