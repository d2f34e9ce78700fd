import type { ClientResult } from '../client-result.js';
import { attempt, type FeatureContext } from '../feature.js';

interface WireProfile {
  avatar_hash: string;
  metadata: string;
  provider_id: string | null;
  provider_issued_user_id: string;
  provider_type: string;
  username: string;
}

/**
 * One game identity of the player, from an external identity provider of a provisional account (seed:
 * Client::GetUserApplicationProfiles; the Social SDK's UserApplicationProfileHandle accessors).
 */
export class UserApplicationProfileHandle {
  readonly #profile: WireProfile;

  constructor(profile: WireProfile) {
    this.#profile = profile;
  }

  /** The profile's avatar hash ('' when none). */
  AvatarHash(): string {
    return this.#profile.avatar_hash;
  }

  /** Provider-specific data, as JSON text. */
  Metadata(): string {
    return this.#profile.metadata;
  }

  /** The provider's id (the issuer of an OIDC provider), or undefined for the built-in providers. */
  ProviderId(): string | undefined {
    return this.#profile.provider_id ?? undefined;
  }

  /** The user id the provider issued. */
  ProviderIssuedUserId(): string {
    return this.#profile.provider_issued_user_id;
  }

  /** The provider's type, such as `OIDC` or `STEAM_SESSION_TICKET`. */
  ProviderType(): string {
    return this.#profile.provider_type;
  }

  Username(): string {
    return this.#profile.username;
  }
}

export type GetUserApplicationProfilesCallback = (
  result: ClientResult,
  profiles: UserApplicationProfileHandle[],
) => void;

/** The player's game identities, fetched from the server and kept for the NoLock read. */
export class ApplicationProfiles {
  readonly #feature: FeatureContext;
  #cached: UserApplicationProfileHandle[] = [];

  constructor(feature: FeatureContext) {
    this.#feature = feature;
  }

  async fetch(): Promise<{ result: ClientResult; profiles: UserApplicationProfileHandle[] }> {
    const { result, body } = await attempt(this.#feature, {
      method: 'GET',
      path: '/users/@me/application-profiles',
    });
    if (!result.Successful()) return { result, profiles: [] };
    this.#cached = ((body as WireProfile[] | undefined) ?? []).map(
      (row) => new UserApplicationProfileHandle(row),
    );
    return { result, profiles: [...this.#cached] };
  }

  /** What the last fetch answered, without a request (the C++ NoLock variant reads the client's cache). */
  cached(): UserApplicationProfileHandle[] {
    return [...this.#cached];
  }
}
