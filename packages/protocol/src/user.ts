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
