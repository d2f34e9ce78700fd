import { CUSTOM_REACTION_EMOJI_PATTERN, isSnowflake } from '@hearth/protocol';
import { HearthError } from '../../kernel/errors.js';

/** The emoji of a reaction as stored and as the wire's emoji object has it. */
export interface ReactionEmoji {
  /** What a reaction is keyed by: a custom emoji's id, or the unicode emoji itself. */
  key: string;
  id: string | null;
  name: string;
  animated: boolean;
}

// One emoji of Unicode's recommended set (flags, keycaps, skin tones, ZWJ sequences), or one pictograph
// written without its emoji presentation selector ("❤" as well as "❤️"), as the platform's clients send both.
// Built at run time: the `v` flag (Node 20+) is newer than the compiler's target.
const UNICODE_SETS: string = 'v';
const RGI_EMOJI = new RegExp('^\\p{RGI_Emoji}$', UNICODE_SETS);
const PICTOGRAPH = /^\p{Extended_Pictographic}\uFE0F?$/u;

/**
 * The emoji of a reaction route's `{emoji}` segment (GUILDS.md §4.10): a unicode emoji (the router has
 * decoded its percent-encoding) or a custom emoji `name:id`. Anything else is 10014 Unknown Emoji.
 *
 * Custom emoji are accepted when well formed: Hearth has no guild emoji yet, so there is no list to find
 * them in; their id must be a snowflake and their name an emoji name, which is what the platform can check
 * of an emoji from a guild the caller is not in (it accepts those only with USE_EXTERNAL_EMOJIS).
 */
export function parseReactionEmoji(segment: string): ReactionEmoji {
  const custom = CUSTOM_REACTION_EMOJI_PATTERN.exec(segment);
  if (custom) {
    const [, animated, name = '', id = ''] = custom;
    if (!isSnowflake(id) || id === '0') throw new HearthError('UnknownEmoji');
    return { key: id, id, name, animated: animated === 'a' };
  }
  if (RGI_EMOJI.test(segment) || PICTOGRAPH.test(segment))
    return { key: segment, id: null, name: segment, animated: false };
  throw new HearthError('UnknownEmoji');
}

/** The wire emoji object of a reaction: `{id, name}`, with `animated` for a custom emoji. */
export function toEmojiObject(emoji: Pick<ReactionEmoji, 'id' | 'name' | 'animated'>) {
  return emoji.id === null
    ? { id: null, name: emoji.name }
    : { id: emoji.id, name: emoji.name, animated: emoji.animated };
}
