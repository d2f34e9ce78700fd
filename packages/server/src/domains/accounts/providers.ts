import {
  type ExternalAuthType,
  FormErrors,
  JWT_AUTH_TYPES,
  ProvisionalLimits,
  VERIFIED_AUTH_TYPES,
} from '@hearth/protocol';
import type { JWK } from 'jose';
import type { Static } from 'typebox';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Storage } from '../../storage/database.js';
import * as store from './identities-store.js';
import {
  checkProviderUrl,
  discover,
  fetchKeySet,
  type ProviderFetchOptions,
  peekIssuer,
  providerRequest,
  verifyIdToken,
} from './oidc.js';
import {
  type IdentityProviderObject,
  ModifyIdentityProvider,
  NewIdentityProvider,
} from './provisional-schemas.js';

export interface IdentityProvidersDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  fetch: ProviderFetchOptions;
}

/** Who an external credential says the player is, in the identity provider's terms. */
export interface ExternalIdentity {
  providerType: string;
  /** The issuer for ID-token providers; '' for the others. */
  providerId: string;
  externalUserId: string;
  displayName: string | undefined;
}

/** Key sets are kept this long before they are fetched again (a rotated key forces a fetch earlier). */
const KEY_SET_TTL_MS = 5 * 60_000;

/**
 * External identity providers configured per application (PROTOCOL.md §B.2), and the verification of the
 * credentials they issue. A configuration is validated when created or edited, never again on its own.
 */
export class IdentityProvidersService {
  readonly #deps: IdentityProvidersDeps;
  readonly #keySets = new Map<string, { keys: JWK[]; fetchedAt: number }>();

  constructor(deps: IdentityProvidersDeps) {
    this.#deps = deps;
  }

  /** The external identities `userId` holds in one application (the game identities of its profiles). */
  async identitiesOf(userId: string, applicationId: string): Promise<ExternalIdentity[]> {
    const rows = await store.identitiesOfUser(this.#deps.storage.db, userId);
    return rows
      .filter((row) => row.application_id === applicationId)
      .map((row) => ({
        providerType: row.provider_type,
        providerId: row.provider_id,
        externalUserId: row.external_user_id,
        displayName: undefined,
      }));
  }

  async list(applicationId: string): Promise<Array<Static<typeof IdentityProviderObject>>> {
    const rows = await store.providersOf(this.#deps.storage.db, applicationId);
    return rows.map(toProviderObject);
  }

  async create(applicationId: string, input: unknown): Promise<Static<typeof IdentityProviderObject>> {
    const body = parse(NewIdentityProvider, input);
    // One configuration per issuer (ID tokens) or per type (verification endpoints): which one verifies a
    // credential must never be ambiguous.
    const existing = await store.providersOf(this.#deps.storage.db, applicationId, body.type);
    const issuer = body.issuer?.replace(/\/+$/, '');
    if (existing.some((p) => !JWT_AUTH_TYPES.includes(body.type) || p.issuer === issuer)) {
      throw invalidForm(JWT_AUTH_TYPES.includes(body.type) ? 'issuer' : 'type', FormErrors.invalid());
    }
    const checked = await this.#validate(body.type, body);
    const now = this.#deps.clock.now();
    const row = {
      id: this.#deps.snowflakes.next(),
      application_id: applicationId,
      type: body.type,
      ...checked,
      created_at: now,
      updated_at: now,
    };
    await store.insertProvider(this.#deps.storage.db, row);
    return toProviderObject(row);
  }

  /** An edit validates the whole resulting configuration again, under today's rules. */
  async modify(
    applicationId: string,
    providerId: string,
    input: unknown,
  ): Promise<Static<typeof IdentityProviderObject>> {
    const changes = parse(ModifyIdentityProvider, input);
    const { storage, clock } = this.#deps;
    const current = await store.findProvider(storage.db, applicationId, providerId);
    if (!current) throw new HearthError('GeneralNotFound');
    const checked = await this.#validate(current.type as ExternalAuthType, {
      issuer: changes.issuer ?? current.issuer ?? undefined,
      client_id: changes.client_id ?? current.client_id ?? undefined,
      verification_url: changes.verification_url ?? current.verification_url ?? undefined,
    });
    await store.updateProvider(storage.db, providerId, { ...checked, updated_at: clock.now() });
    const updated = await store.findProvider(storage.db, applicationId, providerId);
    if (!updated) throw new HearthError('GeneralNotFound');
    return toProviderObject(updated);
  }

  async remove(applicationId: string, providerId: string): Promise<void> {
    if (!(await store.deleteProvider(this.#deps.storage.db, applicationId, providerId))) {
      throw new HearthError('GeneralNotFound');
    }
  }

  async #validate(
    type: ExternalAuthType,
    input: {
      issuer?: string | undefined;
      client_id?: string | undefined;
      verification_url?: string | undefined;
    },
  ): Promise<{
    issuer: string | null;
    client_id: string | null;
    jwks_uri: string | null;
    algorithms: string;
    verification_url: string | null;
  }> {
    if (JWT_AUTH_TYPES.includes(type)) {
      if (input.issuer === undefined) throw invalidForm('issuer', FormErrors.required());
      if (input.client_id === undefined) throw invalidForm('client_id', FormErrors.required());
      const configuration = await discover(input.issuer, this.#deps.fetch);
      return {
        issuer: configuration.issuer,
        client_id: input.client_id,
        jwks_uri: configuration.jwksUri,
        algorithms: JSON.stringify(configuration.algorithms),
        verification_url: null,
      };
    }
    if (VERIFIED_AUTH_TYPES.includes(type)) {
      if (input.verification_url === undefined) throw invalidForm('verification_url', FormErrors.required());
      const url = checkProviderUrl(input.verification_url, this.#deps.fetch, true);
      if (!url) throw invalidForm('verification_url', FormErrors.url());
      return {
        issuer: null,
        client_id: input.client_id ?? null,
        jwks_uri: null,
        algorithms: '[]',
        verification_url: url,
      };
    }
    throw invalidForm('type', FormErrors.invalid());
  }

  /**
   * Verifies an external credential of an application's configured provider. ID tokens are checked against
   * the stored configuration as it was validated; the issuer URL is not checked again (seed, Authentication 6).
   */
  async verify(applicationId: string, type: ExternalAuthType, token: string): Promise<ExternalIdentity> {
    const providers = await store.providersOf(this.#deps.storage.db, applicationId, type);
    if (providers.length === 0) throw new HearthError('ProvisionalOIDCConfigurationNotFound');
    if (JWT_AUTH_TYPES.includes(type)) {
      const issuer = peekIssuer(token);
      const provider = providers.find((p) => p.issuer === issuer);
      if (!provider?.issuer || !provider.jwks_uri || !provider.client_id) {
        throw new HearthError('ProvisionalIssuerMismatch');
      }
      const jwksUri = provider.jwks_uri;
      const verified = await verifyIdToken(
        token,
        {
          issuer: provider.issuer,
          clientId: provider.client_id,
          algorithms: JSON.parse(provider.algorithms) as string[],
          now: this.#deps.clock.now(),
        },
        (refresh) => this.#keys(jwksUri, refresh),
      );
      return {
        providerType: type,
        providerId: provider.issuer,
        externalUserId: verified.subject,
        displayName: verified.preferredUsername,
      };
    }
    // Steam session tickets and EOS access tokens: the provider's verification endpoint decides.
    const provider = providers[0];
    if (!provider?.verification_url) throw new HearthError('ProvisionalOIDCConfigurationNotFound');
    const answer = await providerRequest(provider.verification_url, this.#deps.fetch, {
      type,
      token,
      ...(provider.client_id ? { client_id: provider.client_id } : {}),
    });
    if (!answer) throw new HearthError('ProvisionalOIDCConfigurationNotFound');
    const body = answer.body as { user_id?: unknown; display_name?: unknown } | undefined;
    const userId = body?.user_id;
    if (
      answer.status !== 200 ||
      typeof userId !== 'string' ||
      userId === '' ||
      userId.length > ProvisionalLimits.externalUserIdMaxLength
    ) {
      throw new HearthError('InvalidOAuth2AccessToken');
    }
    const name = body?.display_name;
    return {
      providerType: type,
      providerId: '',
      externalUserId: userId,
      displayName: typeof name === 'string' && name.length >= 1 && name.length <= 32 ? name : undefined,
    };
  }

  async #keys(jwksUri: string, refresh: boolean): Promise<JWK[]> {
    const now = this.#deps.clock.now();
    const cached = this.#keySets.get(jwksUri);
    if (cached && !refresh && now - cached.fetchedAt < KEY_SET_TTL_MS) return cached.keys;
    // A forced refresh still waits a little between fetches: unknown kids must not hammer the provider.
    if (cached && refresh && now - cached.fetchedAt < 10_000) return cached.keys;
    const keys = await fetchKeySet(jwksUri, this.#deps.fetch);
    this.#keySets.set(jwksUri, { keys, fetchedAt: now });
    return keys;
  }
}

function toProviderObject(
  row: store.ProviderRow | (Omit<store.ProviderRow, 'algorithms'> & { algorithms: string }),
) {
  return {
    id: row.id,
    application_id: row.application_id,
    type: row.type,
    issuer: row.issuer,
    client_id: row.client_id,
    jwks_uri: row.jwks_uri,
    id_token_signing_alg_values: JSON.parse(row.algorithms) as string[],
    verification_url: row.verification_url,
    created_at: new Date(Number(row.created_at)).toISOString(),
    updated_at: new Date(Number(row.updated_at)).toISOString(),
  };
}
