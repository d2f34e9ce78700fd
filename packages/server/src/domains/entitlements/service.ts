import {
  EntitlementOwnerTypes,
  EntitlementTypes,
  FormErrors,
  SKUFlags,
  SKUTypes,
  SubscriptionStatus,
} from '@hearth/protocol';
import type { Static } from 'typebox';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import { recordWebhookEvent } from '../../storage/outbox.js';
import type { AccountsService } from '../accounts/service.js';
import type { ApplicationsService } from '../applications/service.js';
import type { GuildsService } from '../guilds/service.js';
import {
  CreateTestEntitlement,
  type EntitlementObject,
  ListEntitlementsQuery,
  ListSubscriptionsQuery,
  NewSku,
  type SkuObject,
  type SubscriptionObject,
  UserEntitlementsQuery,
} from './schemas.js';
import * as store from './store.js';

export interface EntitlementsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  applications: ApplicationsService;
  accounts: AccountsService;
  guilds: GuildsService;
}

/** Who asks: an application's bot, or a player's bearer token of an application. */
export type Caller =
  | { kind: 'bot'; applicationId: string }
  | { kind: 'bearer'; applicationId: string; userId: string };

type Entitlement = Static<typeof EntitlementObject>;
type Subscription = Static<typeof SubscriptionObject>;

/** A billing period when the operator names none: 30 days. */
export const DEFAULT_PERIOD_MS = 30 * 24 * 60 * 60 * 1000;

const SKU_TYPE_OF = {
  durable: SKUTypes.Durable,
  consumable: SKUTypes.Consumable,
  subscription: SKUTypes.Subscription,
};

/**
 * SKUs, entitlements and subscriptions (PROTOCOL.md §I) and the seed's entitlement state table: a
 * subscription start (or a migrated entitlement) creates an active PURCHASE entitlement with `ends_at` null
 * and emits ENTITLEMENT_CREATE; a new billing period emits nothing for the entitlement; the end sets
 * `ends_at` and emits ENTITLEMENT_UPDATE. Entitlement events go to the application's bot sessions and, in
 * the same transaction as the change, to its webhook outbox; subscription events go to the gateway only.
 */
export class EntitlementsService {
  readonly #deps: EntitlementsDeps;

  constructor(deps: EntitlementsDeps) {
    this.#deps = deps;
  }

  // ---- SKUs ----

  /** Operator: a SKU; a subscription SKU comes with its SUBSCRIPTION_GROUP twin (§I.2). */
  async createSku(applicationId: string, input: unknown): Promise<Static<typeof SkuObject>> {
    const { name, type, slug } = parse(NewSku, input);
    const { storage, clock, snowflakes, applications } = this.#deps;
    await applications.requireApplication(applicationId);
    const id = snowflakes.next();
    const row = {
      id,
      application_id: applicationId,
      type: SKU_TYPE_OF[type],
      name,
      slug:
        slug ??
        (name
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-')
          .replace(/^-|-$/g, '') ||
          id),
      flags: SKUFlags.Available | (type === 'subscription' ? SKUFlags.UserSubscription : 0),
      created_at: clock.now(),
    };
    await storage.transaction(async (tx) => {
      await store.insertSku(tx, row);
      if (type === 'subscription') {
        await store.insertSku(tx, { ...row, id: snowflakes.next(), type: SKUTypes.SubscriptionGroup });
      }
    });
    return toSkuObject(row);
  }

  async listSkus(caller: Caller, applicationId: string): Promise<Static<typeof SkuObject>[]> {
    this.#authorize(caller, applicationId);
    return (await store.listSkus(this.#deps.storage.db, applicationId)).map(toSkuObject);
  }

  // ---- Entitlements ----

  async listEntitlements(caller: Caller, applicationId: string, query: unknown): Promise<Entitlement[]> {
    this.#authorize(caller, applicationId);
    const q = parse(ListEntitlementsQuery, query ?? {});
    // A player's token reads only that player's entitlements.
    if (caller.kind === 'bearer' && q.user_id !== undefined && q.user_id !== caller.userId) {
      throw new HearthError('MissingAccess');
    }
    const now = this.#deps.clock.now();
    const rows = await store.listEntitlements(this.#deps.storage.db, {
      applicationId,
      userId: caller.kind === 'bearer' ? caller.userId : q.user_id,
      guildId: q.guild_id,
      skuIds: q.sku_ids?.split(','),
      before: q.before,
      after: q.after,
      limit: q.limit ?? 100,
      endedBefore: truthy(q.exclude_ended) || truthy(q.only_active) ? now : undefined,
      excludeDeleted: q.exclude_deleted === undefined ? true : truthy(q.exclude_deleted),
    });
    return rows.map((row) => toEntitlementObject(row));
  }

  async getEntitlement(caller: Caller, applicationId: string, id: string): Promise<Entitlement> {
    this.#authorize(caller, applicationId);
    const row = await this.#requireEntitlement(this.#deps.storage.db, applicationId, id);
    if (caller.kind === 'bearer' && row.user_id !== caller.userId)
      throw new HearthError('UnknownEntitlement');
    return toEntitlementObject(row);
  }

  /** GET /users/@me/applications/{app}/entitlements (SPEC): the player's own. */
  async userEntitlements(caller: Caller, applicationId: string, query: unknown): Promise<Entitlement[]> {
    if (caller.kind !== 'bearer') throw new HearthError('GeneralUnauthorized');
    this.#authorize(caller, applicationId);
    const q = parse(UserEntitlementsQuery, query ?? {});
    const rows = await store.listEntitlements(this.#deps.storage.db, {
      applicationId,
      userId: caller.userId,
      skuIds: q.sku_ids?.split(','),
      limit: 1000,
      excludeDeleted: true,
      excludeConsumed: truthy(q.exclude_consumed),
    });
    return rows.map((row) => toEntitlementObject(row));
  }

  /** POST …/consume: only a one-time purchase of a consumable SKU (§I.1, 40018). */
  async consume(caller: Caller, applicationId: string, id: string): Promise<void> {
    this.#authorize(caller, applicationId);
    const { storage } = this.#deps;
    const row = await this.#requireEntitlement(storage.db, applicationId, id);
    const sku = await store.findSku(storage.db, row.sku_id);
    if (sku?.type !== SKUTypes.Consumable) throw new HearthError('OnlyConsumableSKUsCanBeConsumed');
    await store.updateEntitlement(storage.db, id, { consumed: 1 });
  }

  /** POST /applications/{app}/entitlements: a test entitlement for a user or guild (§I.1). */
  async createTestEntitlement(caller: Caller, applicationId: string, input: unknown): Promise<Entitlement> {
    this.#authorize(caller, applicationId);
    const { sku_id, owner_id, owner_type } = parse(CreateTestEntitlement, input);
    const { storage, accounts, guilds } = this.#deps;
    const sku = await store.findSku(storage.db, sku_id);
    if (!sku || sku.application_id !== applicationId) throw new HearthError('UnknownSKU');
    const forGuild = owner_type === EntitlementOwnerTypes.Guild;
    const ownerExists = forGuild
      ? await guilds.guildExists(owner_id)
      : (await accounts.getUser(owner_id)) !== undefined;
    if (!ownerExists) throw new HearthError(forGuild ? 'UnknownGuild' : 'UnknownUser');
    const row = await this.#change(applicationId, async (tx, emit) => {
      const created = this.#newEntitlement(sku, {
        type: EntitlementTypes.TestModePurchase,
        userId: forGuild ? null : owner_id,
        guildId: forGuild ? owner_id : null,
        startsAt: null,
      });
      await store.insertEntitlement(tx, created);
      await emit(tx, 'ENTITLEMENT_CREATE', toEntitlementObject(created));
      return created;
    });
    return toEntitlementObject(row);
  }

  /** DELETE /applications/{app}/entitlements/{id}: test entitlements only (§I.1, 40019). */
  async deleteTestEntitlement(caller: Caller, applicationId: string, id: string): Promise<void> {
    this.#authorize(caller, applicationId);
    await this.#change(applicationId, async (tx, emit) => {
      const row = await this.#requireEntitlement(tx, applicationId, id);
      if (row.type !== EntitlementTypes.TestModePurchase)
        throw new HearthError('OnlyTestEntitlementsCanBeDeleted');
      await store.updateEntitlement(tx, id, { deleted: 1 });
      await emit(tx, 'ENTITLEMENT_DELETE', toEntitlementObject({ ...row, deleted: 1 }));
    });
  }

  // ---- Purchases and subscriptions (operator, CLI) ----

  /**
   * A player buys a SKU: a one-time SKU grants a PURCHASE entitlement; a subscription SKU starts a
   * subscription (seed: States, first row). `legacy` starts one the way subscriptions worked before the
   * migration: an APPLICATION_SUBSCRIPTION entitlement ending with the period, for `migrate` to convert.
   */
  async purchase(input: {
    applicationId: string;
    userId: string;
    skuId: string;
    periodMs?: number;
    legacy?: boolean;
  }): Promise<{ entitlement: Entitlement; subscription?: Subscription }> {
    const { storage, accounts, clock } = this.#deps;
    const sku = await store.findSku(storage.db, input.skuId);
    if (!sku || sku.application_id !== input.applicationId) throw new HearthError('UnknownSKU');
    if (!(await accounts.getUser(input.userId))) throw new HearthError('UnknownUser');
    const periodMs = input.periodMs ?? DEFAULT_PERIOD_MS;
    if (!Number.isInteger(periodMs) || periodMs <= 0) throw invalidForm('period', FormErrors.minimum(1));
    if (sku.type === SKUTypes.SubscriptionGroup) throw invalidForm('sku_id', FormErrors.invalid());
    const now = clock.now();
    return this.#change(input.applicationId, async (tx, emit) => {
      if (sku.type !== SKUTypes.Subscription) {
        const entitlement = this.#newEntitlement(sku, {
          type: EntitlementTypes.Purchase,
          userId: input.userId,
          guildId: null,
          startsAt: now,
        });
        await store.insertEntitlement(tx, entitlement);
        await emit(tx, 'ENTITLEMENT_CREATE', toEntitlementObject(entitlement));
        return { entitlement: toEntitlementObject(entitlement) };
      }
      const subscriptionId = this.#deps.snowflakes.next();
      const entitlement = {
        ...this.#newEntitlement(sku, {
          type: input.legacy ? EntitlementTypes.ApplicationSubscription : EntitlementTypes.Purchase,
          userId: input.userId,
          guildId: null,
          startsAt: now,
        }),
        // Before the migration an entitlement ended with each period; now it lasts until the subscription ends.
        ends_at: input.legacy ? now + periodMs : null,
        subscription_id: subscriptionId,
      };
      const subscription = {
        id: subscriptionId,
        application_id: input.applicationId,
        user_id: input.userId,
        sku_ids: JSON.stringify([sku.id]),
        entitlement_ids: JSON.stringify([entitlement.id]),
        renewal_sku_ids: JSON.stringify([sku.id]),
        current_period_start: now,
        current_period_end: now + periodMs,
        status: SubscriptionStatus.Active,
        canceled_at: null,
        created_at: now,
      };
      await store.insertSubscription(tx, subscription);
      await store.insertEntitlement(tx, entitlement);
      await emit(tx, 'ENTITLEMENT_CREATE', toEntitlementObject(entitlement));
      await emit(tx, 'SUBSCRIPTION_CREATE', toSubscriptionObject(subscription));
      return {
        entitlement: toEntitlementObject(entitlement),
        subscription: toSubscriptionObject(subscription),
      };
    });
  }

  /**
   * A new billing period (seed: States, second row): the subscription moves on and says so; the entitlement
   * stays as it is and emits nothing. A legacy entitlement is extended, as before the migration.
   */
  async renew(subscriptionId: string, periodMs = DEFAULT_PERIOD_MS): Promise<Subscription> {
    return this.#changeSubscription(subscriptionId, async (tx, emit, subscription) => {
      if (subscription.status !== SubscriptionStatus.Active)
        throw invalidForm('subscription_id', FormErrors.invalid());
      const start = Number(subscription.current_period_end);
      const changes = { current_period_start: start, current_period_end: start + periodMs };
      await store.updateSubscription(tx, subscription.id, changes);
      for (const entitlement of await this.#entitlementsOf(tx, subscription)) {
        if (entitlement.type !== EntitlementTypes.ApplicationSubscription) continue;
        const extended = { ...entitlement, ends_at: changes.current_period_end };
        await store.updateEntitlement(tx, entitlement.id, { ends_at: extended.ends_at });
        await emit(tx, 'ENTITLEMENT_UPDATE', toEntitlementObject(extended));
      }
      const updated = { ...subscription, ...changes };
      await emit(tx, 'SUBSCRIPTION_UPDATE', toSubscriptionObject(updated));
      return toSubscriptionObject(updated);
    });
  }

  /**
   * Every subscription whose period has ended by now (emulator mode's sweep, after a clock jump): an active
   * one renews, period after period, as many as the jump passed, each announced as `renew` does; an ending
   * one (canceled) ends. Answers how many changed.
   */
  async renewDue(): Promise<number> {
    const { storage, clock } = this.#deps;
    const now = clock.now();
    const due = await store.dueSubscriptions(storage.db, now, [
      SubscriptionStatus.Active,
      SubscriptionStatus.Ending,
    ]);
    for (const subscription of due) {
      if (subscription.status === SubscriptionStatus.Ending) {
        await this.end(subscription.id);
        continue;
      }
      const periodMs = Number(subscription.current_period_end) - Number(subscription.current_period_start);
      let end = Number(subscription.current_period_end);
      while (end <= now && periodMs > 0) {
        await this.renew(subscription.id, periodMs);
        end += periodMs;
      }
    }
    return due.length;
  }

  /** The player cancels: ENDING with `canceled_at`, nothing renews (§I.3); the entitlement lasts until the end. */
  async cancel(subscriptionId: string): Promise<Subscription> {
    const now = this.#deps.clock.now();
    return this.#changeSubscription(subscriptionId, async (tx, emit, subscription) => {
      if (subscription.status !== SubscriptionStatus.Active)
        throw invalidForm('subscription_id', FormErrors.invalid());
      const changes = { status: SubscriptionStatus.Ending, canceled_at: now, renewal_sku_ids: null };
      await store.updateSubscription(tx, subscription.id, changes);
      const updated = { ...subscription, ...changes };
      await emit(tx, 'SUBSCRIPTION_UPDATE', toSubscriptionObject(updated));
      return toSubscriptionObject(updated);
    });
  }

  /**
   * The subscription ends, by cancellation or expiry (seed: States, third row): INACTIVE, and each of its
   * entitlements gets `ends_at` = the end and emits ENTITLEMENT_UPDATE.
   */
  async end(subscriptionId: string): Promise<Subscription> {
    const now = this.#deps.clock.now();
    return this.#changeSubscription(subscriptionId, async (tx, emit, subscription) => {
      if (subscription.status === SubscriptionStatus.Inactive)
        throw invalidForm('subscription_id', FormErrors.invalid());
      const changes = { status: SubscriptionStatus.Inactive, current_period_end: now, renewal_sku_ids: null };
      await store.updateSubscription(tx, subscription.id, changes);
      for (const entitlement of await this.#entitlementsOf(tx, subscription)) {
        await store.updateEntitlement(tx, entitlement.id, { ends_at: now });
        await emit(tx, 'ENTITLEMENT_UPDATE', toEntitlementObject({ ...entitlement, ends_at: now }));
      }
      const updated = { ...subscription, ...changes };
      await emit(tx, 'SUBSCRIPTION_UPDATE', toSubscriptionObject(updated));
      return toSubscriptionObject(updated);
    });
  }

  /**
   * Migrates a legacy APPLICATION_SUBSCRIPTION entitlement of an ongoing subscription to the new behaviour:
   * PURCHASE with `ends_at` null, announced by ENTITLEMENT_CREATE (seed: States, first row). That event does
   * not signal a new entitlement: its data carries `"migrated": true` (Hearth's marker; the platform names
   * none).
   */
  async migrate(entitlementId: string): Promise<Entitlement> {
    const { storage } = this.#deps;
    const found = await store.findEntitlement(storage.db, entitlementId);
    if (!found) throw new HearthError('UnknownEntitlement');
    return this.#change(found.application_id, async (tx, emit) => {
      const row = await this.#requireEntitlement(tx, found.application_id, entitlementId);
      const subscription = row.subscription_id
        ? await store.findSubscription(tx, row.subscription_id)
        : undefined;
      if (
        row.type !== EntitlementTypes.ApplicationSubscription ||
        !subscription ||
        subscription.status === SubscriptionStatus.Inactive
      ) {
        throw invalidForm('entitlement_id', FormErrors.invalid());
      }
      const migrated = { ...row, type: EntitlementTypes.Purchase, ends_at: null };
      await store.updateEntitlement(tx, row.id, { type: migrated.type, ends_at: null });
      await emit(tx, 'ENTITLEMENT_CREATE', { ...toEntitlementObject(migrated), migrated: true });
      return toEntitlementObject(migrated);
    });
  }

  async listSubscriptions(caller: Caller, skuId: string, query: unknown): Promise<Subscription[]> {
    const q = parse(ListSubscriptionsQuery, query ?? {});
    const sku = await this.#requireSku(caller, skuId);
    // A bot names the user (§I.3); a player's token reads its own.
    if (caller.kind === 'bot' && q.user_id === undefined) throw invalidForm('user_id', FormErrors.required());
    if (caller.kind === 'bearer' && q.user_id !== undefined && q.user_id !== caller.userId) {
      throw new HearthError('MissingAccess');
    }
    const rows = await store.listSubscriptions(this.#deps.storage.db, {
      skuId: sku.id,
      userId: caller.kind === 'bearer' ? caller.userId : q.user_id,
      before: q.before,
      after: q.after,
      limit: q.limit ?? 50,
    });
    return rows.map(toSubscriptionObject);
  }

  async getSubscription(caller: Caller, skuId: string, id: string): Promise<Subscription> {
    const sku = await this.#requireSku(caller, skuId);
    const row = await store.findSubscription(this.#deps.storage.db, id);
    const mine = caller.kind === 'bot' || row?.user_id === caller.userId;
    if (!row || !mine || !(JSON.parse(row.sku_ids) as string[]).includes(sku.id)) {
      throw new HearthError('GeneralNotFound');
    }
    return toSubscriptionObject(row);
  }

  // ---- Steps ----

  #authorize(caller: Caller, applicationId: string): void {
    if (caller.applicationId !== applicationId) throw new HearthError('MissingAccess');
  }

  async #requireSku(caller: Caller, skuId: string): Promise<store.SkuRow> {
    const sku = await store.findSku(this.#deps.storage.db, skuId);
    if (!sku || sku.application_id !== caller.applicationId) throw new HearthError('UnknownSKU');
    return sku;
  }

  async #requireEntitlement(db: Executor, applicationId: string, id: string): Promise<store.EntitlementRow> {
    const row = await store.findEntitlement(db, id);
    if (!row || row.application_id !== applicationId) throw new HearthError('UnknownEntitlement');
    return row;
  }

  async #entitlementsOf(db: Executor, subscription: store.SubscriptionRow): Promise<store.EntitlementRow[]> {
    const rows: store.EntitlementRow[] = [];
    for (const id of JSON.parse(subscription.entitlement_ids) as string[]) {
      const row = await store.findEntitlement(db, id);
      if (row && row.deleted === 0) rows.push(row);
    }
    return rows;
  }

  #newEntitlement(
    sku: store.SkuRow,
    fields: { type: number; userId: string | null; guildId: string | null; startsAt: number | null },
  ): store.EntitlementRow {
    return {
      id: this.#deps.snowflakes.next(),
      application_id: sku.application_id,
      sku_id: sku.id,
      user_id: fields.userId,
      guild_id: fields.guildId,
      type: fields.type,
      deleted: 0,
      consumed: 0,
      starts_at: fields.startsAt,
      ends_at: null,
      subscription_id: null,
      created_at: this.#deps.clock.now(),
    };
  }

  async #changeSubscription<T>(
    subscriptionId: string,
    work: (tx: Executor, emit: Emit, subscription: store.SubscriptionRow) => Promise<T>,
  ): Promise<T> {
    const found = await store.findSubscription(this.#deps.storage.db, subscriptionId);
    if (!found) throw new HearthError('GeneralNotFound');
    return this.#change(found.application_id, async (tx, emit) => {
      const subscription = await store.findSubscription(tx, subscriptionId);
      if (!subscription) throw new HearthError('GeneralNotFound');
      return work(tx, emit, subscription);
    });
  }

  /**
   * Runs a change in one transaction. Its entitlement events are recorded in the webhook outbox inside it;
   * every event goes on the bus, for the application's bot sessions, after it committed.
   */
  async #change<T>(applicationId: string, work: (tx: Executor, emit: Emit) => Promise<T>): Promise<T> {
    const { storage, bus, clock, snowflakes, applications } = this.#deps;
    const application = await applications.requireApplication(applicationId);
    const events: BusEvent[] = [];
    const emit: Emit = async (tx, type, data) => {
      if (type.startsWith('ENTITLEMENT_')) {
        await recordWebhookEvent(tx, {
          id: snowflakes.next(),
          type,
          applicationId,
          data,
          createdAt: clock.now(),
        });
      }
      // The bot user's sessions of this application: not its players' sessions.
      events.push({ type, data, audience: { users: [application.botUserId], applicationId } });
    };
    const result = await storage.transaction((tx) => work(tx, emit));
    for (const event of events) await bus.publish(event);
    return result;
  }
}

type Emit = (tx: Executor, type: string, data: Record<string, unknown>) => Promise<void>;

function truthy(value: boolean | undefined): boolean {
  return value === true;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export function toEntitlementObject(row: store.EntitlementRow): Entitlement {
  return {
    id: row.id,
    sku_id: row.sku_id,
    application_id: row.application_id,
    ...(row.user_id !== null ? { user_id: row.user_id } : {}),
    ...(row.guild_id !== null ? { guild_id: row.guild_id } : {}),
    type: row.type,
    deleted: row.deleted === 1,
    consumed: row.consumed === 1,
    starts_at: iso(row.starts_at),
    ends_at: iso(row.ends_at),
    ...(row.subscription_id !== null ? { subscription_id: row.subscription_id } : {}),
    promotion_id: null,
    gift_code_flags: 0,
  };
}

function toSkuObject(row: store.SkuRow): Static<typeof SkuObject> {
  return {
    id: row.id,
    type: row.type,
    application_id: row.application_id,
    name: row.name,
    slug: row.slug,
    flags: row.flags,
    dependent_sku_id: null,
    manifest_labels: null,
    access_type: 1,
    features: [],
    release_date: null,
    premium: false,
    show_age_gate: false,
  };
}

function toSubscriptionObject(row: store.SubscriptionRow): Subscription {
  return {
    id: row.id,
    user_id: row.user_id,
    sku_ids: JSON.parse(row.sku_ids) as string[],
    entitlement_ids: JSON.parse(row.entitlement_ids) as string[],
    renewal_sku_ids: row.renewal_sku_ids === null ? null : (JSON.parse(row.renewal_sku_ids) as string[]),
    current_period_start: new Date(Number(row.current_period_start)).toISOString(),
    current_period_end: new Date(Number(row.current_period_end)).toISOString(),
    status: row.status,
    canceled_at: iso(row.canceled_at),
  };
}
