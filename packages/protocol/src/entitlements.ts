/** SKUs, entitlements and subscriptions (PROTOCOL.md §I; seed: States, Records). */

/** Entitlement `type` (§I.1). PURCHASE is what a subscription grants since the migration (seed: States). */
export const EntitlementTypes = {
  Purchase: 1,
  PremiumSubscription: 2,
  DeveloperGift: 3,
  TestModePurchase: 4,
  FreePurchase: 5,
  UserGift: 6,
  PremiumPurchase: 7,
  /** The former type of subscription entitlements, before they were migrated to PURCHASE. */
  ApplicationSubscription: 8,
} as const;

export type EntitlementType = (typeof EntitlementTypes)[keyof typeof EntitlementTypes];

/** `owner_type` of a test entitlement (§I.1). */
export const EntitlementOwnerTypes = { Guild: 1, User: 2 } as const;

/** SKU `type` (§I.2). */
export const SKUTypes = {
  Durable: 2,
  Consumable: 3,
  Subscription: 5,
  SubscriptionGroup: 6,
} as const;

export type SKUType = (typeof SKUTypes)[keyof typeof SKUTypes];

/** SKU `flags` (§I.2). */
export const SKUFlags = {
  Available: 1 << 2,
  GuildSubscription: 1 << 7,
  UserSubscription: 1 << 8,
} as const;

/** Subscription `status` (seed: States; §I.3). */
export const SubscriptionStatus = {
  Active: 0,
  Inactive: 1,
  Ending: 2,
} as const;

export type SubscriptionStatusValue = (typeof SubscriptionStatus)[keyof typeof SubscriptionStatus];

/** Page sizes of the list endpoints (§I.1, §I.3). */
export const MAX_ENTITLEMENTS_PAGE = 100;
export const MAX_SUBSCRIPTIONS_PAGE = 100;
export const DEFAULT_SUBSCRIPTIONS_PAGE = 50;
