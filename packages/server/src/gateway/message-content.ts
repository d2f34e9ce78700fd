import { GatewayIntents } from '@hearth/protocol';

/** The dispatches that carry a message object whose content is privileged (GUILDS.md §7.1, intent 15). */
const MESSAGE_EVENTS = new Set(['MESSAGE_CREATE', 'MESSAGE_UPDATE']);

/** What the MESSAGE_CONTENT intent unlocks in a message: without it these are empty (GUILDS.md §4.1). */
const PRIVILEGED_FIELDS = { content: '', embeds: [], attachments: [], components: [] } as const;

/** AutoMod executions carry the member's text; without MESSAGE_CONTENT it is empty (GUILDS.md §10). */
const EXECUTION_EVENT = 'AUTO_MODERATION_ACTION_EXECUTION';
const PRIVILEGED_EXECUTION_FIELDS = { content: '', matched_content: '' } as const;

interface Reader {
  identity: { kind: string; userId: string };
  intents: number;
}

/**
 * A message dispatch as one session may read it: a bot without MESSAGE_CONTENT gets content, embeds,
 * attachments and components emptied, except in DMs, in its own messages and in messages that mention
 * it (the interface's rule, GUILDS.md §4.1); people and players always read everything.
 */
export function readableBy(
  reader: Reader,
  type: string,
  data: Record<string, unknown>,
): Record<string, unknown> {
  if (reader.identity.kind !== 'bot' || (reader.intents & GatewayIntents.MessageContent) !== 0) return data;
  if (type === EXECUTION_EVENT) return { ...data, ...PRIVILEGED_EXECUTION_FIELDS };
  if (!MESSAGE_EVENTS.has(type)) return data;
  if (typeof data['guild_id'] !== 'string') return data;
  const userId = reader.identity.userId;
  if ((data['author'] as { id?: unknown } | undefined)?.id === userId) return data;
  const mentions = data['mentions'];
  if (Array.isArray(mentions) && mentions.some((user: { id?: unknown }) => user?.id === userId)) return data;
  const stripped: Record<string, unknown> = { ...data };
  for (const [key, empty] of Object.entries(PRIVILEGED_FIELDS)) if (key in data) stripped[key] = empty;
  if ('poll' in data) delete stripped['poll'];
  return stripped;
}
