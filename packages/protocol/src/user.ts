/** Number of default avatars of migrated users, `(id >> 22) % 6` (seed: Records, User). */
export const DEFAULT_AVATAR_COUNT = 6;
/** Number of default avatars of legacy users, `discriminator % 5`. */
export const LEGACY_DEFAULT_AVATAR_COUNT = 5;
/** The discriminator of migrated users. */
export const MIGRATED_DISCRIMINATOR = '0';

/** Which default avatar a user without an avatar shows (seed: Records, User). */
export function defaultAvatarIndex(user: { id: string; discriminator: string }): number {
  if (user.discriminator === MIGRATED_DISCRIMINATOR) {
    return Number((BigInt(user.id) >> 22n) % BigInt(DEFAULT_AVATAR_COUNT));
  }
  return Number(user.discriminator) % LEGACY_DEFAULT_AVATAR_COUNT;
}

/** Premium types; `premium_type` reads 0 unless the token has the approved `identify.premium` scope. */
export const PremiumTypes = { None: 0, NitroClassic: 1, Nitro: 2, NitroBasic: 3 } as const;

/** Connection services whose legacy game-publisher connections leave the connections list (seed). */
export const LEGACY_PUBLISHER_CONNECTION_TYPES = [
  'battlenet',
  'epicgames',
  'leagueoflegends',
  'riotgames',
] as const;

/** Usernames a person may change at most this often (the platform: twice an hour), else USERNAME_RATE_LIMIT. */
export const USERNAME_CHANGE_LIMIT = { limit: 2, windowMs: 60 * 60 * 1000 } as const;

/** Image data of avatars and banners (`data:image/{type};base64,…`): the types accepted and the size limit. */
export const UserImageLimits = {
  /** Decoded bytes of one image: the platform's 10 MiB upload limit. */
  maxBytes: 10 * 1024 * 1024,
  types: ['image/png', 'image/jpeg', 'image/gif', 'image/webp'],
} as const;

/** The `size` a CDN image URL may ask for: powers of two from 16 to 4096. */
export const CDN_IMAGE_SIZES = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096] as const;
/** The side of a default avatar when no `size` is asked for. */
export const DEFAULT_AVATAR_SIZE = 256;
/** The colour of each default avatar, by index (RGB). */
export const DEFAULT_AVATAR_COLORS = [0x5865f2, 0x757e8a, 0x3ba55c, 0xfaa61a, 0xed4245, 0xeb459f] as const;
