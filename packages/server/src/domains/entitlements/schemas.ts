import {
  DEFAULT_SUBSCRIPTIONS_PAGE,
  EntitlementOwnerTypes,
  MAX_ENTITLEMENTS_PAGE,
  MAX_SUBSCRIPTIONS_PAGE,
} from '@hearth/protocol';
import { Type } from 'typebox';

const Snowflake = Type.String({ format: 'snowflake' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);
/** `?exclude_ended=true` and friends, read as the other query booleans of the API are. */
const QueryBoolean = Type.Boolean();
/** A comma-separated list of snowflakes (`sku_ids=1,2`). */
const SnowflakeList = Type.String({ pattern: '^(0|[1-9][0-9]*)(,(0|[1-9][0-9]*))*$', maxLength: 2000 });

export const ApplicationPath = Type.Object({ application_id: Snowflake });
export const EntitlementPath = Type.Object({ application_id: Snowflake, entitlement_id: Snowflake });
export const SkuPath = Type.Object({ sku_id: Snowflake });
export const SubscriptionPath = Type.Object({ sku_id: Snowflake, subscription_id: Snowflake });

/** GET /applications/{app}/entitlements (§I.1). */
export const ListEntitlementsQuery = Type.Object({
  user_id: Type.Optional(Snowflake),
  sku_ids: Type.Optional(SnowflakeList),
  before: Type.Optional(Snowflake),
  after: Type.Optional(Snowflake),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_ENTITLEMENTS_PAGE, default: MAX_ENTITLEMENTS_PAGE }),
  ),
  guild_id: Type.Optional(Snowflake),
  exclude_ended: Type.Optional(QueryBoolean),
  exclude_deleted: Type.Optional(QueryBoolean),
  only_active: Type.Optional(QueryBoolean),
});

/** GET /users/@me/applications/{app}/entitlements (SPEC). */
export const UserEntitlementsQuery = Type.Object({
  sku_ids: Type.Optional(SnowflakeList),
  exclude_consumed: Type.Optional(QueryBoolean),
});

/** POST /applications/{app}/entitlements: a test entitlement (§I.1). */
export const CreateTestEntitlement = Type.Object({
  sku_id: Snowflake,
  owner_id: Snowflake,
  owner_type: Type.Union([
    Type.Literal(EntitlementOwnerTypes.Guild),
    Type.Literal(EntitlementOwnerTypes.User),
  ]),
});

/** GET /skus/{sku}/subscriptions (§I.3). */
export const ListSubscriptionsQuery = Type.Object({
  before: Type.Optional(Snowflake),
  after: Type.Optional(Snowflake),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_SUBSCRIPTIONS_PAGE, default: DEFAULT_SUBSCRIPTIONS_PAGE }),
  ),
  user_id: Type.Optional(Snowflake),
});

/** What an operator creates from the CLI. */
export const NewSku = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  type: Type.Union([Type.Literal('durable'), Type.Literal('consumable'), Type.Literal('subscription')]),
  slug: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z0-9-]+$' })),
});

export const EntitlementObject = Type.Object({
  id: Type.String(),
  sku_id: Type.String(),
  application_id: Type.String(),
  user_id: Type.Optional(Type.String()),
  guild_id: Type.Optional(Type.String()),
  type: Type.Integer(),
  deleted: Type.Boolean(),
  consumed: Type.Optional(Type.Boolean()),
  starts_at: Type.Optional(Nullable(Type.String())),
  ends_at: Type.Optional(Nullable(Type.String())),
  subscription_id: Type.Optional(Type.String()),
  promotion_id: Type.Null(),
  gift_code_flags: Type.Integer(),
});

export const SkuObject = Type.Object({
  id: Type.String(),
  type: Type.Integer(),
  application_id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  flags: Type.Integer(),
  dependent_sku_id: Type.Null(),
  manifest_labels: Type.Null(),
  access_type: Type.Integer(),
  features: Type.Array(Type.String()),
  release_date: Type.Null(),
  premium: Type.Boolean(),
  show_age_gate: Type.Boolean(),
});

export const SubscriptionObject = Type.Object({
  id: Type.String(),
  user_id: Type.String(),
  sku_ids: Type.Array(Type.String()),
  entitlement_ids: Type.Array(Type.String()),
  renewal_sku_ids: Nullable(Type.Array(Type.String())),
  current_period_start: Type.String(),
  current_period_end: Type.String(),
  status: Type.Integer(),
  canceled_at: Nullable(Type.String()),
});
