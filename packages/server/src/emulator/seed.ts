import { parsePermissions } from '@hearth/protocol';
import type { AccountLinkService } from '../domains/accounts/link.js';
import type { AccountsService } from '../domains/accounts/service.js';
import type { ApplicationsService } from '../domains/applications/service.js';
import type { ChannelsService } from '../domains/channels/service.js';
import type { EntitlementsService } from '../domains/entitlements/service.js';
import type { BotInstalls } from '../domains/guilds/bot-install.js';
import type { RolesService } from '../domains/guilds/roles.js';
import type { GuildsService } from '../domains/guilds/service.js';
import { CreateLobby } from '../domains/lobbies/schemas.js';
import type { LobbiesService } from '../domains/lobbies/service.js';
import type { OAuth2Service } from '../domains/oauth2/service.js';
import type { RelationshipsService } from '../domains/relationships/service.js';
import type { Clock } from '../kernel/clock.js';
import { HearthError } from '../kernel/errors.js';
import { parse } from '../kernel/validation.js';
import type { Storage } from '../storage/database.js';
import { parseDuration } from './clock.js';
import { type FixtureDocument, parseFixture } from './fixtures.js';
import { findFixture, recordFixture } from './store.js';

/** The services a fixture run goes through: the same calls as the platform's own requests and commands. */
export interface SeedDeps {
  storage: Storage;
  clock: Clock;
  accounts: Pick<AccountsService, 'createUser'>;
  applications: Pick<ApplicationsService, 'createApplication' | 'adminUpdate'>;
  accountLink: Pick<AccountLinkService, 'botToken'>;
  oauth2: Pick<OAuth2Service, 'authenticateAccessToken'>;
  guilds: Pick<GuildsService, 'createGuild' | 'addMember'>;
  roles: Pick<RolesService, 'createRole'>;
  channels: Pick<ChannelsService, 'createChannel'>;
  botInstalls: Pick<BotInstalls, 'install'>;
  lobbies: Pick<LobbiesService, 'createLobby'>;
  relationships: Pick<RelationshipsService, 'befriend'>;
  entitlements: Pick<EntitlementsService, 'createSku' | 'purchase'>;
}

type Out = Record<string, unknown>;

/** What a run prints: per section, per fixture name, the ids and credentials of the object. */
export interface SeedResult {
  applications: Record<
    string,
    { id: string; client_secret: string; bot_token: string; bot_user_id: string; public_key: string }
  >;
  users: Record<string, { id: string; token: string }>;
  provisional_accounts: Record<string, { id: string; access_token: string }>;
  guilds: Record<string, { id: string; roles: Record<string, string>; channels: Record<string, string> }>;
  lobbies: Record<string, { id: string }>;
  skus: Record<string, { id: string }>;
  entitlements: Record<string, { id: string; subscription_id: string | null }>;
}

/**
 * Runs a fixture document (README "Fixtures"): creates each named object not created before, in dependency
 * order, and records it under its path; an object found recorded is reused as it is. A refusal names the
 * path of the object in the document and the service's reason.
 */
export async function seed(deps: SeedDeps, input: unknown): Promise<SeedResult> {
  const doc = parseFixture(input);
  const result: SeedResult = {
    applications: {},
    users: {},
    provisional_accounts: {},
    guilds: {},
    lobbies: {},
    skus: {},
    entitlements: {},
  };
  const once = async <T>(path: string[], create: () => Promise<T>): Promise<T> => {
    const key = path.join('/');
    const recorded = await findFixture(deps.storage.db, key);
    if (recorded !== undefined) return recorded as T;
    const created = await at(path, create);
    await recordFixture(deps.storage.db, key, created, deps.clock.now());
    return created;
  };
  await seedApplications(deps, doc, result, once);
  await seedPeople(deps, doc, result, once);
  await seedGuilds(deps, doc, result, once);
  await seedSocial(deps, doc, result, once);
  await seedStore(deps, doc, result, once);
  return result;
}

type Once = <T>(path: string[], create: () => Promise<T>) => Promise<T>;

async function seedApplications(deps: SeedDeps, doc: FixtureDocument, result: SeedResult, once: Once) {
  // Owners are users: they are made first when an application names one.
  for (const [name, user] of Object.entries(doc.users ?? {})) {
    result.users[name] = await once(['users', name], async () => {
      const created = await deps.accounts.createUser({
        username: user.username,
        email: user.email ?? `${user.username}@fixtures.hearth.invalid`,
        password: user.password ?? `fixture-${user.username}`,
        ...(user.global_name !== undefined ? { global_name: user.global_name } : {}),
      });
      return { id: created.user.id, token: created.token };
    });
  }
  for (const [name, app] of Object.entries(doc.applications ?? {})) {
    result.applications[name] = await once(['applications', name], async () => {
      const created = await deps.applications.createApplication({
        name: app.name,
        redirect_uris: app.redirect_uris ?? [],
        public_client: app.public_client ?? false,
        ...(app.owner !== undefined ? { owner_id: result.users[app.owner]?.id } : {}),
      });
      if ((app.flags ?? []).length > 0)
        await deps.applications.adminUpdate(created.application.id, { grant_flags: app.flags });
      return {
        id: created.application.id,
        client_secret: created.clientSecret,
        bot_token: created.botToken,
        bot_user_id: created.botUser.id,
        public_key: created.application.verifyKey,
      };
    });
  }
}

async function seedPeople(deps: SeedDeps, doc: FixtureDocument, result: SeedResult, once: Once) {
  for (const [name, account] of Object.entries(doc.provisional_accounts ?? {})) {
    result.provisional_accounts[name] = await once(['provisional_accounts', name], async () => {
      const applicationId = result.applications[account.application]?.id ?? '';
      const token = await deps.accountLink.botToken(applicationId, {
        external_user_id: account.external_user_id,
        ...(account.display_name !== undefined ? { preferred_global_name: account.display_name } : {}),
      });
      const grant = await deps.oauth2.authenticateAccessToken(token.access_token);
      if (!grant) throw new HearthError('UnknownUser');
      return { id: grant.userId, access_token: token.access_token };
    });
  }
}

async function seedGuilds(deps: SeedDeps, doc: FixtureDocument, result: SeedResult, once: Once) {
  for (const [name, guild] of Object.entries(doc.guilds ?? {})) {
    const path = ['guilds', name];
    const ownerId = userId(result, guild.owner);
    const { id } = await once(path, () => deps.guilds.createGuild(ownerId, { name: guild.name }));
    const out = { id, roles: {} as Record<string, string>, channels: {} as Record<string, string> };
    result.guilds[name] = out;
    for (const [i, member] of (guild.members ?? []).entries()) {
      await once([...path, 'members', String(i), member], async () => {
        await deps.guilds.addMember(id, userId(result, member));
        return {};
      });
    }
    for (const [role, body] of Object.entries(guild.roles ?? {})) {
      const created = await once([...path, 'roles', role], async () => {
        const made = await deps.roles.createRole(
          ownerId,
          id,
          { name: body.name, permissions: String(body.permissions ?? 0), color: body.color ?? 0 },
          null,
        );
        return { id: made.id };
      });
      out.roles[role] = created.id;
    }
    // Parents first, so a child finds its category's id.
    const channels = Object.entries(guild.channels ?? {}).sort(
      ([, a], [, b]) => Number(a.parent !== undefined) - Number(b.parent !== undefined),
    );
    for (const [channel, body] of channels) {
      const created = await once([...path, 'channels', channel], async () => {
        const made = await deps.channels.createChannel(
          ownerId,
          id,
          {
            name: body.name,
            type: body.type ?? 0,
            ...(body.topic !== undefined ? { topic: body.topic } : {}),
            ...(body.parent !== undefined ? { parent_id: out.channels[body.parent] } : {}),
          },
          null,
        );
        return { id: made.id };
      });
      out.channels[channel] = created.id;
    }
    for (const [i, bot] of (guild.bots ?? []).entries()) {
      await once([...path, 'bots', String(i), bot.application], async () => {
        const permissions = parsePermissions(String(bot.permissions ?? 0));
        const installed = await deps.botInstalls.install({
          guildId: id,
          applicationId: result.applications[bot.application]?.id ?? '',
          permissions: permissions ?? 0n,
          actorId: ownerId,
        });
        return { role_id: installed.roleId };
      });
    }
  }
}

async function seedSocial(deps: SeedDeps, doc: FixtureDocument, result: SeedResult, once: Once) {
  for (const [name, lobby] of Object.entries(doc.lobbies ?? {})) {
    result.lobbies[name] = await once(['lobbies', name], async () => {
      const body = parse(CreateLobby, {
        members: (lobby.members ?? []).map((member) => ({ id: userId(result, member) })),
        ...(lobby.metadata !== undefined ? { metadata: lobby.metadata } : {}),
        ...(lobby.idle_timeout_seconds !== undefined
          ? { idle_timeout_seconds: lobby.idle_timeout_seconds }
          : {}),
      });
      const created = await deps.lobbies.createLobby(result.applications[lobby.application]?.id ?? '', body);
      return { id: String(created['id']) };
    });
  }
  for (const [i, [a, b]] of (doc.friendships ?? []).entries()) {
    await once(['friendships', String(i), a, b], async () => {
      // A request, then its acceptance: the two calls of the two players.
      await deps.relationships.befriend(userId(result, a), userId(result, b));
      await deps.relationships.befriend(userId(result, b), userId(result, a));
      return {};
    });
  }
}

async function seedStore(deps: SeedDeps, doc: FixtureDocument, result: SeedResult, once: Once) {
  for (const [name, sku] of Object.entries(doc.skus ?? {})) {
    result.skus[name] = await once(['skus', name], async () => {
      const created = await deps.entitlements.createSku(result.applications[sku.application]?.id ?? '', {
        name: sku.name,
        type: sku.type,
      });
      return { id: created.id };
    });
  }
  for (const [name, entitlement] of Object.entries(doc.entitlements ?? {})) {
    result.entitlements[name] = await once(['entitlements', name], async () => {
      const sku = doc.skus?.[entitlement.sku];
      const period = entitlement.period === undefined ? undefined : parseDuration(entitlement.period);
      const bought = await deps.entitlements.purchase({
        applicationId: result.applications[sku?.application ?? '']?.id ?? '',
        userId: userId(result, entitlement.user),
        skuId: result.skus[entitlement.sku]?.id ?? '',
        ...(period !== undefined ? { periodMs: period } : {}),
      });
      return { id: bought.entitlement.id, subscription_id: bought.subscription?.id ?? null };
    });
  }
}

/** A user or provisional account's id by fixture name (references were checked before anything ran). */
function userId(result: SeedResult, name: string): string {
  return result.users[name]?.id ?? result.provisional_accounts[name]?.id ?? '';
}

/** Runs `work`; a refusal becomes a 50035 at the object's path in the document, with the service's reason. */
async function at<T>(path: string[], work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof HearthError)) throw error;
    let tree: Out = error.errors
      ? (error.errors as Out)
      : { _errors: [{ code: 'FIXTURE_REFUSED', message: error.message }] };
    for (const key of [...path].reverse()) tree = { [key]: tree };
    throw new HearthError('InvalidFormBody', { errors: tree as never });
  }
}
