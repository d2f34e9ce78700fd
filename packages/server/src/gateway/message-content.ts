import { GatewayIntents } from '@hearth/protocol';
import { asReadBy } from '../domains/channel-messages/content-access.js';

/** The dispatches that carry a message object whose content is privileged (GUILDS.md §7.1, intent 15). */
const MESSAGE_EVENTS = new Set(['MESSAGE_CREATE', 'MESSAGE_UPDATE']);

/** AutoMod executions carry the member's text; without MESSAGE_CONTENT it is empty (GUILDS.md §10). */
const EXECUTION_EVENT = 'AUTO_MODERATION_ACTION_EXECUTION';
const PRIVILEGED_EXECUTION_FIELDS = { content: '', matched_content: '' } as const;

interface Reader {
  identity: { kind: string; userId: string };
  intents: number;
}

/**
 * A message dispatch as one session may read it: a bot session without the MESSAGE_CONTENT intent gets
 * the privileged fields emptied (content-access.ts holds the rule and its exceptions), and AutoMod
 * executions without the member's text.
 */
export function readableBy(
  reader: Reader,
  type: string,
  data: Record<string, unknown>,
): Record<string, unknown> {
  const contentAccess = (reader.intents & GatewayIntents.MessageContent) !== 0;
  if (type === EXECUTION_EVENT)
    return reader.identity.kind === 'bot' && !contentAccess
      ? { ...data, ...PRIVILEGED_EXECUTION_FIELDS }
      : data;
  if (!MESSAGE_EVENTS.has(type)) return data;
  const contentReader = {
    userId: reader.identity.userId,
    bot: reader.identity.kind === 'bot',
    contentAccess,
  };
  return asReadBy(contentReader, data, typeof data['guild_id'] === 'string');
}
