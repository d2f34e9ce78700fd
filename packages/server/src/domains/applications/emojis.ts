import { ApplicationLimits, EMOJI_NAME_PATTERN, FormErrors, Limits } from '@hearth/protocol';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import type { Storage } from '../../storage/database.js';
import { isUniqueViolation } from '../../storage/database.js';
import { parseImageData } from '../accounts/images.js';
import type { AccountsService, StoredImage } from '../accounts/service.js';
import { toUserObject } from '../accounts/service.js';
import * as store from './emoji-store.js';
import type { ApplicationsService } from './service.js';

export interface ApplicationEmojisDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  accounts: AccountsService;
  applications: ApplicationsService;
}

/**
 * Application-owned emoji (DOCS emoji: Application-Owned Emoji): up to 2000 per application, usable only
 * by that application's bot, served by the CDN route `/emojis/{id}.{ext}`.
 */
export class ApplicationEmojisService {
  readonly #deps: ApplicationEmojisDeps;

  constructor(deps: ApplicationEmojisDeps) {
    this.#deps = deps;
  }

  async list(applicationId: string) {
    await this.#deps.applications.requireApplication(applicationId);
    const rows = await store.listEmojis(this.#deps.storage.db, applicationId);
    const users = new Map<string, ReturnType<typeof toUserObject> | undefined>();
    const items = [];
    for (const row of rows) {
      if (!users.has(row.user_id)) {
        const user = await this.#deps.accounts.getUser(row.user_id);
        users.set(row.user_id, user && toUserObject(user));
      }
      items.push(toEmojiObject(row, users.get(row.user_id)));
    }
    return { items };
  }

  async get(applicationId: string, emojiId: string) {
    const row = await this.#require(applicationId, emojiId);
    return this.#withUser(row);
  }

  /** Create Application Emoji: a name of 2–32 word characters, unused in the app, and an image ≤ 256 KiB. */
  async create(applicationId: string, userId: string, input: { name: string; image: string }) {
    const { storage, clock, snowflakes } = this.#deps;
    await this.#deps.applications.requireApplication(applicationId);
    const name = checkName(input.name);
    const image = parseImageData('image', input.image, ApplicationLimits.emojiMaxBytes);
    const id = snowflakes.next();
    const row = {
      id,
      application_id: applicationId,
      name,
      user_id: userId,
      animated: image.hash.startsWith('a_') ? 1 : 0,
      content_type: image.type,
      created_at: clock.now(),
    };
    try {
      await storage.transaction(async (tx) => {
        if (storage.engine === 'postgres') await store.lockApplication(tx, applicationId);
        if ((await store.countEmojis(tx, applicationId)) >= Limits.applicationEmojisMax)
          throw new HearthError('MaximumEmojis');
        if (await store.findEmojiByName(tx, applicationId, name))
          throw invalidForm('name', FormErrors.emojiNameTaken());
        await store.insertEmoji(tx, { ...row, bytes: image.bytes });
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw invalidForm('name', FormErrors.emojiNameTaken());
      throw error;
    }
    return this.#withUser(row);
  }

  async rename(applicationId: string, emojiId: string, input: { name?: string | undefined }) {
    const row = await this.#require(applicationId, emojiId);
    if (input.name === undefined || input.name === row.name) return this.#withUser(row);
    const name = checkName(input.name);
    try {
      await this.#deps.storage.transaction(async (tx) => {
        if (await store.findEmojiByName(tx, applicationId, name))
          throw invalidForm('name', FormErrors.emojiNameTaken());
        await store.renameEmoji(tx, emojiId, name);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw invalidForm('name', FormErrors.emojiNameTaken());
      throw error;
    }
    return this.#withUser({ ...row, name });
  }

  async delete(applicationId: string, emojiId: string): Promise<void> {
    await this.#require(applicationId, emojiId);
    await store.deleteEmoji(this.#deps.storage.db, emojiId);
  }

  /** The bytes behind `/emojis/{id}.{ext}`. */
  async image(emojiId: string): Promise<StoredImage | undefined> {
    const row = await store.findEmojiImage(this.#deps.storage.db, emojiId);
    return row && { contentType: row.content_type, bytes: Buffer.from(row.bytes) };
  }

  async #require(applicationId: string, emojiId: string): Promise<store.EmojiRow> {
    await this.#deps.applications.requireApplication(applicationId);
    const row = await store.findEmoji(this.#deps.storage.db, applicationId, emojiId);
    if (!row) throw new HearthError('UnknownEmoji');
    return row;
  }

  async #withUser(row: store.EmojiRow) {
    const user = await this.#deps.accounts.getUser(row.user_id);
    return toEmojiObject(row, user && toUserObject(user));
  }
}

function checkName(name: string): string {
  const { emojiNameMinLength: min, emojiNameMaxLength: max } = ApplicationLimits;
  if (name.length < min || name.length > max) throw invalidForm('name', FormErrors.badLength(min, max));
  if (!EMOJI_NAME_PATTERN.test(name)) throw invalidForm('name', FormErrors.invalid());
  return name;
}

/** The emoji object (DOCS emoji: Emoji Object), with the uploader as `user`. */
function toEmojiObject(row: store.EmojiRow, user: ReturnType<typeof toUserObject> | undefined) {
  return {
    id: row.id,
    name: row.name,
    roles: [] as string[],
    ...(user ? { user } : {}),
    require_colons: true,
    managed: false,
    animated: Number(row.animated) === 1,
    available: true,
  };
}
