/**
 * What an AutoMod trigger looks for in a message's text (DOCS auto-moderation: Keyword Matching
 * Strategies, Trigger Metadata). Pure functions: the service decides which rules run and what follows.
 */

/** A keyword (or regex, or preset word) that matched, and the text it matched. */
export interface KeywordHit {
  keyword: string;
  content: string;
}

/** A letter, mark or digit: what a word is made of; anything else (space, punctuation) bounds a word. */
const WORD = '[\\p{L}\\p{M}\\p{N}]';
const compiled = new Map<string, RegExp>();

/**
 * A keyword as a pattern matching the whole word(s) it covers, case-insensitively: `cat*` a word starting
 * with "cat", `*cat` one ending with it, `*cat*` one containing it, `cat` the word itself. Inner spaces
 * match any run of white space, so a phrase matches however it is spaced.
 */
export function keywordPattern(keyword: string): RegExp {
  const cached = compiled.get(keyword);
  if (cached) return cached;
  const leading = keyword.startsWith('*');
  const trailing = keyword.length > 1 && keyword.endsWith('*');
  const core = keyword.slice(leading ? 1 : 0, trailing ? -1 : undefined);
  const literal = core
    .trim()
    .split(/\s+/u)
    // Only the syntax characters: under the `u` flag, escaping anything else is itself an error.
    .map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
    .join('\\s+');
  const source = `(?<!${WORD})${leading ? `${WORD}*` : ''}${literal}${trailing ? `${WORD}*` : `(?!${WORD})`}`;
  const pattern = new RegExp(source, 'giu');
  if (compiled.size > 10_000) compiled.clear();
  compiled.set(keyword, pattern);
  return pattern;
}

/** Whether a keyword has anything to match once its wildcards are taken off. */
export function isMatchableKeyword(keyword: string): boolean {
  return keyword.replace(/^\*|\*$/g, '').trim() !== '';
}

/**
 * The first keyword occurrence in `text` that no `allowList` entry covers. An allow-list entry, matched
 * with the same strategies, exempts the occurrences that lie inside one of its own matches, so `*cat*`
 * with `location` allowed still catches "bobcat" in the same message.
 */
export function matchKeywords(
  text: string,
  keywords: readonly string[],
  allowList: readonly string[],
): KeywordHit | undefined {
  if (text === '' || keywords.length === 0) return undefined;
  let allowed: Array<[number, number]> | undefined;
  for (const keyword of keywords) {
    if (!isMatchableKeyword(keyword)) continue;
    for (const match of text.matchAll(keywordPattern(keyword))) {
      const start = match.index;
      const end = start + match[0].length;
      allowed ??= spans(text, allowList);
      if (!allowed.some(([from, to]) => from <= start && end <= to)) return { keyword, content: match[0] };
    }
  }
  return undefined;
}

function spans(text: string, keywords: readonly string[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const keyword of keywords) {
    if (!isMatchableKeyword(keyword)) continue;
    for (const match of text.matchAll(keywordPattern(keyword)))
      out.push([match.index, match.index + match[0].length]);
  }
  return out;
}

// ---- Regex patterns ----

/**
 * A `regex_patterns` entry compiled for JavaScript, or why it cannot be. The platform runs Rust's regex,
 * which has no look-around and no back-references, and runs in linear time: patterns using the former
 * are refused as the platform would, and patterns whose matching could take exponential time here
 * (a repeated group that itself repeats, such as `(a+)+`) are refused so no rule can stall the server.
 * A leading `(?i)` (Rust's inline flag) makes the pattern case-insensitive.
 */
export function compileRegex(pattern: string): RegExp | undefined {
  if (regexes.has(pattern)) return regexes.get(pattern) ?? undefined;
  const regex = translateRegex(pattern);
  if (regexes.size > 10_000) regexes.clear();
  regexes.set(pattern, regex ?? null);
  return regex;
}
const regexes = new Map<string, RegExp | null>();

function translateRegex(pattern: string): RegExp | undefined {
  let source = pattern;
  let flags = 'gu';
  if (source.startsWith('(?i)')) {
    source = source.slice(4);
    flags += 'i';
  }
  if (/\(\?<?[=!]|\\[1-9]|\\k</.test(source)) return undefined;
  if (nestedRepetition(source)) return undefined;
  try {
    return new RegExp(source, flags);
  } catch {
    return undefined;
  }
}

/** Whether a repeated group holds a repetition itself (star height above one). */
function nestedRepetition(source: string): boolean {
  // One entry per open group: whether something inside it repeats.
  const groups: boolean[] = [];
  let lastGroupRepeats = false;
  for (let i = 0; i < source.length; i++) {
    const char = source[i];
    if (char === '\\') {
      i++;
      lastGroupRepeats = false;
      continue;
    }
    if (char === '[') {
      i = classEnd(source, i);
      lastGroupRepeats = false;
      continue;
    }
    if (char === '(') {
      groups.push(false);
      continue;
    }
    if (char === ')') {
      lastGroupRepeats = groups.pop() ?? false;
      // A closed group that repeats inside counts for its parent too.
      if (lastGroupRepeats && groups.length > 0) groups[groups.length - 1] = true;
      if (isUnboundedRepeat(source, i + 1) && lastGroupRepeats) return true;
      continue;
    }
    if (isUnboundedRepeat(source, i)) {
      if (groups.length > 0) groups[groups.length - 1] = true;
      if (source[i - 1] === ')' && lastGroupRepeats) return true;
    }
    lastGroupRepeats = false;
  }
  return false;
}

function classEnd(source: string, start: number): number {
  for (let i = start + 1; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === ']' && i > start + 1) return i;
  }
  return source.length;
}

/** `*`, `+`, or `{n,}` / `{n,m}` with m above one, at `index`. */
function isUnboundedRepeat(source: string, index: number): boolean {
  const char = source[index];
  if (char === '*' || char === '+') return true;
  if (char !== '{') return false;
  const bounds = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(index));
  if (!bounds) return false;
  if (bounds[2] === undefined) return Number(bounds[1]) > 1;
  return bounds[3] === '' || Number(bounds[3]) > 1;
}

/** The first match of any pattern outside the allow list: the pattern as written is the matched keyword. */
export function matchRegexes(
  text: string,
  patterns: readonly string[],
  allowList: readonly string[],
): KeywordHit | undefined {
  if (text === '' || patterns.length === 0) return undefined;
  let allowed: Array<[number, number]> | undefined;
  for (const pattern of patterns) {
    const regex = compileRegex(pattern);
    if (!regex) continue;
    for (const match of text.matchAll(regex)) {
      if (match[0] === '') continue;
      const start = match.index;
      const end = start + match[0].length;
      allowed ??= spans(text, allowList);
      if (!allowed.some(([from, to]) => from <= start && end <= to))
        return { keyword: pattern, content: match[0] };
    }
  }
  return undefined;
}

// ---- Mentions ----

const USER_MENTION = /<@!?(\d{1,20})>/g;
const ROLE_MENTION = /<@&(\d{1,20})>/g;

/** The distinct users and roles a text mentions (`<@id>`, `<@!id>`, `<@&id>`), as MENTION_SPAM counts them. */
export function uniqueMentions(text: string): string[] {
  const users = [...text.matchAll(USER_MENTION)].map((match) => `user:${match[1]}`);
  const roles = [...text.matchAll(ROLE_MENTION)].map((match) => `role:${match[1]}`);
  return [...new Set([...users, ...roles])];
}

// ---- Spam ----

/** The text SPAM compares for repeats: case folded, white space collapsed. */
export function spamFingerprint(text: string): string {
  return text.toLowerCase().replace(/\s+/gu, ' ').trim();
}
