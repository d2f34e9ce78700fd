import { FormErrors, InviteLimits, TARGET_USERS_CSV_HEADER } from '@hearth/protocol';
import { formErrorTree, HearthError } from '../../kernel/errors.js';

/** The largest snowflake: ids are unsigned 64-bit integers. */
const MAX_SNOWFLAKE = (1n << 64n) - 1n;

/**
 * Reads a target users file (GUILDS.md §3.6): one column of user ids, one per line, optionally under a
 * `user_id` header; blank lines and repeats are skipped. Bad lines answer 50035 at `field`, each named
 * by its line number ("Line 5: invalid user ID - …"), at most InviteLimits.targetUsersErrorsMax of them.
 */
export function parseTargetUsers(text: string, field: string): string[] {
  const ids = new Set<string>();
  const bad: Array<readonly [readonly string[], ReturnType<typeof FormErrors.targetUsersLine>]> = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  lines.forEach((raw, index) => {
    const value = unquote(raw.trim().replace(/,+$/, '').trim());
    if (value === '') return;
    if (index === 0 && value.toLowerCase() === TARGET_USERS_CSV_HEADER) return;
    if (!isSnowflake(value)) {
      if (bad.length < InviteLimits.targetUsersErrorsMax)
        bad.push([[field], FormErrors.targetUsersLine(index + 1, raw.trim())]);
      return;
    }
    ids.add(BigInt(value).toString());
  });
  if (bad.length > 0) throw new HearthError('InvalidFormBody', { errors: formErrorTree(bad) });
  if (ids.size === 0)
    throw new HearthError('InvalidFormBody', {
      errors: formErrorTree([[[field], FormErrors.targetUsersEmpty()]]),
    });
  return [...ids];
}

/** The file GET /invites/{code}/target-users answers: the header, then one id per line (seed). */
export function targetUsersCsv(userIds: readonly string[]): string {
  return [TARGET_USERS_CSV_HEADER, ...userIds].map((line) => `${line}\n`).join('');
}

function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"')
    ? value.slice(1, -1).trim()
    : value;
}

function isSnowflake(value: string): boolean {
  return /^[0-9]{1,20}$/.test(value) && BigInt(value) <= MAX_SNOWFLAKE;
}
