/**
 * Dated rules of the spec (seed: Limits, Versioning). A service asks `isInEffect(rule, clock.now())` so a
 * server started with `--now` follows the platform as it was, or will be, on that day.
 */
export const Timeline = {
  voiceGatewayV4Required: '2024-11-18T00:00:00Z',
  fileUploadLimit10MiB: '2025-01-16T00:00:00Z',
  /** Interaction response type 10 PREMIUM_REQUIRED arrives with Premium Apps (change log 26 Sep 2023). */
  premiumRequiredResponse: '2023-09-26T00:00:00Z',
  /** …and is deprecated for premium buttons, yet "will continue to function" (change log 17 Jun 2024). */
  premiumRequiredDeprecated: '2024-06-17T00:00:00Z',
  /** The paginated pin routes arrive; GET/PUT/DELETE /channels/{id}/pins are deprecated (change log 25 Jun 2025). */
  paginatedPinRoutes: '2025-06-25T00:00:00Z',
  createGuildRemovedForApps: '2025-07-15T00:00:00Z',
  requestAllGuildMembersLimitAllServers: '2025-10-01T00:00:00Z',
  permissionsOf2026_02_23: '2026-02-23T00:00:00Z',
  endToEndEncryptedCallsOnly: '2026-03-01T00:00:00Z',
  legacyPublisherConnectionsHidden: '2026-07-10T00:00:00Z',
  sdkMinor1_10: '2026-07-28T00:00:00Z',
} as const;

export type TimelineRule = keyof typeof Timeline;

const effectiveAt = Object.fromEntries(
  Object.entries(Timeline).map(([rule, iso]) => [rule, Date.parse(iso)]),
) as Record<TimelineRule, number>;

export function isInEffect(rule: TimelineRule, nowMs: number): boolean {
  return nowMs >= effectiveAt[rule];
}
