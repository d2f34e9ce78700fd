/**
 * Every response a test server sends is checked against reference/openapi.json (SPEC) by
 * `test-support/conformance.ts`. This file is the only way past that check, and each entry says why.
 *
 * An entry names one kind of problem of one route; Hearth's route template without the version prefix
 * (`/lobbies/:lobby_id`), or `(no route)` for requests no route matched. Where Hearth is wrong and SPEC is
 * right, fix Hearth instead. Categories:
 * - `hearth-only`: a route the platform does not have (Hearth's accounts, operator API, pages). Its
 *   errors are still checked against SPEC's error body.
 * - `not-in-spec`: the platform serves the route, but SPEC (a preview) leaves it out; the source that
 *   describes it is named.
 * - `spec-defect`: SPEC says something the platform's own documentation or behaviour contradicts.
 * - `hearth-gap`: Hearth is wrong and the fix is larger than a serializer; the issue that owns it is named.
 */

export type AllowlistCategory = 'hearth-only' | 'not-in-spec' | 'spec-defect' | 'hearth-gap';

export interface AllowlistEntry {
  /** `GET`, …, or `*` for every method (a HEAD is checked as its GET). */
  method: string;
  /** Hearth's route template without `/api/v{N}`, or `(no route)`. */
  route: string;
  /** Only this status; absent: any. */
  status?: number;
  /** The kind of problem excused (see `Problem` in conformance.ts). */
  problem: 'route' | 'status' | 'content-type' | 'body-presence' | 'json' | 'body';
  /** For `body`: the JSON pointer of the failing value; `*` is one segment, `**` any number. */
  instancePath?: string;
  /** For `body`: only this JSON Schema keyword (`required`, `const`, `oneOf`, …). */
  keyword?: string;
  category: AllowlistCategory;
  reason: string;
}

/** A schema of SPEC replaced before anything is checked against it, because SPEC is wrong there. */
export interface SpecCorrection {
  /** JSON pointer into SPEC; the run stops if SPEC has nothing there (the correction is stale). */
  pointer: string;
  /** The schema that replaces SPEC's, or a function of SPEC's. */
  schema: object | ((original: Record<string, unknown>) => object);
  category: 'spec-defect';
  reason: string;
}

export const SPEC_CORRECTIONS: readonly SpecCorrection[] = [
  {
    pointer: '/components/schemas/InnerErrors/properties/_errors/items',
    schema: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' } },
      required: ['code', 'message'],
    },
    category: 'spec-defect',
    reason:
      'SPEC reuses the top-level Error (integer code) for the leaves of the errors tree; the platform sends ' +
      'string codes there ("BASE_TYPE_REQUIRED"; docs: Reference, Error Messages, example of 50035)',
  },
  {
    pointer: '/components/schemas/EntitlementTypes',
    schema: {
      type: 'integer',
      oneOf: [
        ['PURCHASE', 1],
        ['PREMIUM_SUBSCRIPTION', 2],
        ['DEVELOPER_GIFT', 3],
        ['TEST_MODE_PURCHASE', 4],
        ['FREE_PURCHASE', 5],
        ['USER_GIFT', 6],
        ['PREMIUM_PURCHASE', 7],
        ['APPLICATION_SUBSCRIPTION', 8],
        ['QUEST_REWARD', 10],
      ].map(([title, value]) => ({ title, const: value })),
    },
    category: 'spec-defect',
    reason:
      'SPEC lists only APPLICATION_SUBSCRIPTION (8) and QUEST_REWARD (10); the platform documents types 1–8 ' +
      'and 10, and PURCHASE (1) is what a purchase and a migrated subscription grant (PROTOCOL.md §I)',
  },
  {
    pointer: '/components/schemas/OAuth2Scopes',
    schema: (original) => ({
      ...original,
      oneOf: [
        ...(original['oneOf'] as object[]),
        ...[
          'identify.premium',
          'sdk.social_layer',
          'sdk.social_layer_presence',
          'lobbies.write',
          'gateway.connect',
          'dm_channels.messages.read',
          'dm_channels.messages.write',
          'guilds.channels.read',
          'relationships.write',
          'application_identities.write',
          'presences.read',
          'presences.write',
          'account.global_name.update',
          'payment_sources.country_code',
        ].map((scope) => ({ title: scope, const: scope })),
      ],
    }),
    category: 'spec-defect',
    reason:
      'SPEC lacks identify.premium (official list) and the Social SDK scopes (sdk.social_layer, ' +
      'sdk.social_layer_presence and what they expand to, PROTOCOL.md §B.7, §C.7), which applications and ' +
      'tokens of the Social SDK carry',
  },
  {
    pointer: '/components/schemas/ChannelTypes',
    schema: (original) => ({
      ...original,
      oneOf: [...(original['oneOf'] as object[]), { title: 'GUILD_MEDIA', const: 16 }],
    }),
    category: 'spec-defect',
    reason:
      'SPEC lacks GUILD_MEDIA (16), a guild channel type the platform documents beside GUILD_FORUM ' +
      '(GUILDS.md §2.1; discord-api-types ChannelType.GuildMedia)',
  },
  ...[
    '/components/schemas/GuildChannelResponse/properties/type/enum',
    '/components/schemas/CreateGuildChannelRequest/properties/type/oneOf/1/enum',
    '/components/schemas/UpdateGuildChannelRequestPartial/properties/type/oneOf/1/enum',
  ].map(
    (pointer): SpecCorrection => ({
      pointer,
      schema: (original) => [...(original as unknown as number[]), 16],
      category: 'spec-defect',
      reason: 'the guild channel types SPEC enumerates leave out GUILD_MEDIA (16) (GUILDS.md §2.1)',
    }),
  ),
  {
    pointer: '/components/schemas/MessageReferenceType',
    schema: (original) => ({
      ...original,
      oneOf: [...(original['oneOf'] as object[]), { title: 'FORWARD', const: 1 }],
    }),
    category: 'spec-defect',
    reason:
      "SPEC lists only DEFAULT (0); a forward's message_reference has type FORWARD (1) (seed: Message, " +
      'message_reference.type FORWARD; GUILDS.md §4.4; discord-api-types MessageReferenceType.Forward)',
  },
];

const EMULATOR =
  "emulator mode's admin API (README, Emulator mode: --emulator): tests drive the server, outside the API";
const HEARTH_ACCOUNTS = 'Hearth-only: accounts with email and password (README, The authorization server)';

/** The route is the whole problem: every response of it is outside SPEC (its errors are still checked). */
function route(
  methods: string[],
  template: string,
  category: AllowlistCategory,
  reason: string,
): AllowlistEntry[] {
  return methods.map((method) => ({ method, route: template, problem: 'route', category, reason }));
}

const CDN =
  "the platform's CDN routes for user images (docs: Reference, Image Formatting), served by Hearth itself; not API routes";
const NOT_IN_SPEC = 'PROTOCOL.md (head): paths not present in SPEC, documented elsewhere';
const RELATIONSHIPS = `${NOT_IN_SPEC}: relationship endpoints (PROTOCOL.md §B.6, UDOC)`;
const GAME_DMS = `${NOT_IN_SPEC}: game-DM endpoints (PROTOCOL.md §B.5, UDOC)`;
const PROVIDERS =
  'provisional accounts: identity providers of an application (PROTOCOL.md §B.2, DOCS); not in SPEC';

const PORTAL =
  'the developer portal (HTML pages and their forms), outside the API (README, The developer portal)';
const PORTAL_ERRORS = 'the portal tells a person of a refused form in HTML, on the page of the form';
/** The developer portal's routes (web/portal/routes.ts). */
const PORTAL_ROUTES: ReadonlyArray<[string, string]> = [
  ['GET', '/developers'],
  ['GET', '/developers/portal.js'],
  ['POST', '/developers/login'],
  ['POST', '/developers/logout'],
  ['POST', '/developers/applications'],
  ['GET', '/developers/applications/:application_id'],
  ['POST', '/developers/applications/:application_id/general'],
  ['GET', '/developers/applications/:application_id/oauth2'],
  ['POST', '/developers/applications/:application_id/oauth2/reset-secret'],
  ['POST', '/developers/applications/:application_id/oauth2/redirect-uris'],
  ['POST', '/developers/applications/:application_id/oauth2/public-client'],
  ['GET', '/developers/applications/:application_id/bot'],
  ['POST', '/developers/applications/:application_id/bot/reset-token'],
  ['POST', '/developers/applications/:application_id/bot/intents'],
  ['GET', '/developers/applications/:application_id/webhooks'],
  ['POST', '/developers/applications/:application_id/webhooks'],
  ['POST', '/developers/applications/:application_id/webhooks/replay'],
  ['GET', '/developers/applications/:application_id/social-sdk'],
  ['POST', '/developers/applications/:application_id/social-sdk/identity-providers'],
  ['POST', '/developers/applications/:application_id/social-sdk/identity-providers/remove'],
  ['GET', '/developers/applications/:application_id/monetization'],
  ['POST', '/developers/applications/:application_id/monetization/skus'],
  ['POST', '/developers/applications/:application_id/monetization/entitlements'],
  ['POST', '/developers/applications/:application_id/monetization/entitlements/delete'],
  ['GET', '/developers/applications/:application_id/commands'],
  ['POST', '/developers/applications/:application_id/icon'],
  ['POST', '/developers/applications/:application_id/team'],
  ['GET', '/developers/applications/:application_id/installation'],
  ['POST', '/developers/applications/:application_id/installation'],
  ['GET', '/developers/applications/:application_id/activities'],
  ['POST', '/developers/applications/:application_id/activities/mappings'],
  ['POST', '/developers/applications/:application_id/activities/mappings/remove'],
  ['GET', '/developers/teams'],
  ['POST', '/developers/teams'],
  ['GET', '/developers/teams/:team_id'],
  ['POST', '/developers/teams/:team_id/members'],
  ['POST', '/developers/teams/:team_id/members/role'],
  ['POST', '/developers/teams/:team_id/members/remove'],
];

export const CONFORMANCE_ALLOWLIST: readonly AllowlistEntry[] = [
  // ── Hearth's own routes ──────────────────────────────────────────────────────────────────────────
  ...route(
    ['POST'],
    '/interactions',
    'not-in-spec',
    "the platform client's own route by which a user runs a command, uses a component or submits a modal; " +
      'public bots never call it, so neither SPEC nor the documentation describe it (domains/interactions)',
  ),
  ...route(['POST'], '/auth/register', 'hearth-only', HEARTH_ACCOUNTS),
  ...route(['POST'], '/auth/login', 'hearth-only', HEARTH_ACCOUNTS),
  ...route(['POST'], '/auth/logout', 'hearth-only', HEARTH_ACCOUNTS),
  ...route(['POST'], '/auth/password', 'hearth-only', HEARTH_ACCOUNTS),
  ...route(
    ['POST'],
    '/oauth2/authorize',
    'hearth-only',
    "the consent page's own call (README, The authorization server); the platform's is internal",
  ),
  ...(
    [
      [['GET', 'POST'], '/_hearth/clock'],
      [['POST'], '/_hearth/seed'],
      [['GET'], '/_hearth/snapshots'],
      [['PUT', 'DELETE'], '/_hearth/snapshots/:name'],
      [['POST'], '/_hearth/snapshots/:name/restore'],
      [['GET', 'POST', 'DELETE'], '/_hearth/faults'],
      [['DELETE'], '/_hearth/faults/:fault_id'],
      [['GET'], '/_hearth/act'],
      [['POST'], '/_hearth/act/:action'],
    ] as const
  ).flatMap(([methods, template]) => route([...methods], template, 'hearth-only', EMULATOR)),
  ...route(
    ['PUT', 'DELETE'],
    '/admin/users/:user_id/ban',
    'hearth-only',
    'the operator API (README, --admin-token); the platform bans through its own tools',
  ),
  ...route(
    ['GET'],
    '/users/@me/guilds/:guild_id/channels',
    'hearth-only',
    "the library's GetGuildChannels (seed; Social SDK GuildChannel: isLinkable, " +
      'isViewableAndWriteableByAllMembers, linkedLobby); the platform serves it through a route it does not publish',
  ),
  ...route(
    ['GET'],
    '/guilds/:guild_id/application-command-index',
    'hearth-only',
    "the platform client's command index (what a member may run in a guild, to discover commands); the platform's route is internal",
  ),
  ...route(
    ['GET'],
    '/users/@me/application-command-index',
    'hearth-only',
    "the platform client's command index of the user's installed applications (DMs, private channels); the platform's route is internal",
  ),
  ...route(
    ['POST'],
    '/users/@me/authorize-requests',
    'hearth-only',
    "the platform client's request that a game authorize the player (README); the platform's is internal",
  ),
  ...route(
    ['POST'],
    '/users/:user_id/messages/:message_id/activity-invite/accept',
    'hearth-only',
    'AcceptActivityInvite: the platform documents no route for it (PROTOCOL.md §K)',
  ),
  ...route(
    ['PATCH', 'DELETE'],
    '/lobbies/:lobby_id/messages/:message_id',
    'hearth-only',
    'editing and deleting lobby messages: Hearth serves what the SDK and LOBBY_MESSAGE_UPDATE/DELETE imply; SPEC has no route',
  ),
  ...route(
    ['GET'],
    '/oauth2/authorize',
    'hearth-only',
    'the login and consent page (HTML), outside the API (README, The authorization server)',
  ),
  {
    method: 'GET',
    route: '/oauth2/authorize',
    problem: 'content-type',
    category: 'hearth-only',
    reason:
      'the page tells a person of a bad client or redirect URI in HTML, never redirecting (RFC 6749 §4.1.2.1)',
  },
  ...route(['GET'], '/oauth2/authorize.js', 'hearth-only', "the consent page's script, outside the API"),
  ...route(
    ['GET'],
    '/oauth2/authorized',
    'hearth-only',
    'the page a browser lands on after a bot install without redirect_uri (HTML), outside the API',
  ),
  ...route(
    ['GET'],
    '/openapi.json',
    'hearth-only',
    "Hearth's own OpenAPI description, generated from its routes (README, Served OpenAPI); the platform publishes its own elsewhere",
  ),
  ...route(
    ['GET'],
    '/docs',
    'hearth-only',
    'the HTML index of the served OpenAPI document at /api/docs (README, Served OpenAPI), outside the API',
  ),
  ...PORTAL_ROUTES.flatMap(([method, template]): AllowlistEntry[] => [
    ...route([method], template, 'hearth-only', PORTAL),
    { method, route: template, problem: 'content-type', category: 'hearth-only', reason: PORTAL_ERRORS },
  ]),
  ...route(
    ['GET'],
    '/healthz',
    'hearth-only',
    'the liveness probe of orchestrators and load balancers (README, Operations), outside the API',
  ),
  ...route(
    ['GET'],
    '/readyz',
    'hearth-only',
    'the readiness probe (README, Operations), outside the API: 503 names the failing check',
  ),
  {
    method: 'GET',
    route: '/readyz',
    status: 503,
    problem: 'status',
    category: 'hearth-only',
    reason: 'the readiness probe answers 503 while a dependency fails, as orchestrators expect',
  },
  ...route(
    ['GET'],
    '/metrics',
    'hearth-only',
    'Prometheus metrics in its text format (README, Operations, --metrics), outside the API',
  ),
  {
    method: 'OPTIONS',
    route: '(no route)',
    status: 204,
    problem: 'status',
    category: 'not-in-spec',
    reason:
      "a browser's CORS preflight of any API route (http/cors.ts): the platform's API answers them " +
      '(discord-api-docs#1873, "Our API does support CORS"); SPEC describes no OPTIONS',
  },
  // ── Platform routes SPEC leaves out ─────────────────────────────────────────────────────────────
  ...route(
    ['GET'],
    '/.well-known/openid-configuration',
    'not-in-spec',
    'OpenID Connect Discovery 1.0 §4, outside /api and outside SPEC (PROTOCOL.md §K)',
  ),
  ...route(['POST'], '/partner-sdk/child-token', 'not-in-spec', `${NOT_IN_SPEC} (PROTOCOL.md §B.3)`),
  ...route(['GET'], '/applications/:application_id/skus', 'not-in-spec', `${NOT_IN_SPEC} (PROTOCOL.md §I)`),
  ...route(
    ['GET'],
    '/applications/:application_id/rpc',
    'not-in-spec',
    'Get Application RPC, the public application object with `rpc_origins` that the platform client reads ' +
      'before serving a game over local RPC (UDOC resources/application; PROTOCOL.md §H); SPEC leaves it out',
  ),
  ...route(
    ['POST'],
    '/guilds',
    'not-in-spec',
    'Create Guild: removed for apps from 15 July 2025 (seed, Versioning), so SPEC, which describes what apps ' +
      'call, leaves it out; user accounts still create guilds (GUILDS.md §3.1)',
  ),
  ...route(
    ['DELETE'],
    '/guilds/:guild_id',
    'not-in-spec',
    'Delete Guild (docs: resources/guild, owner only); SPEC leaves it out with Create Guild',
  ),
  ...route(
    ['POST'],
    '/invites/:code',
    'not-in-spec',
    "Accept Invite: the platform's user-session route that joins a guild through an invite (GUILDS.md §3.6); " +
      'SPEC, which describes what apps call, leaves it out',
  ),
  ...route(['GET'], '/avatars/:user_id/:file', 'hearth-only', CDN),
  ...route(['GET'], '/banners/:user_id/:file', 'hearth-only', CDN),
  ...route(['GET'], '/embed/avatars/:file', 'hearth-only', CDN),
  ...route(['GET'], '/app-icons/:application_id/:file', 'hearth-only', CDN),
  ...route(['GET'], '/channel-icons/:channel_id/:file', 'hearth-only', CDN),
  ...route(['GET'], '/emojis/:file', 'hearth-only', CDN),
  ...route(
    ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'],
    '/activities/:application_id/*',
    'hearth-only',
    "the Activity proxy (the platform's `{app}.discordsays.com` host with its URL mappings; DOCS activities: Networking), not an API route",
  ),
  ...(['GET', 'POST'] as const).map(
    (method): AllowlistEntry => ({
      method,
      route: '/activities/:application_id/*',
      status: 502,
      problem: 'status',
      category: 'hearth-only',
      reason:
        'the Activity proxy answers 502 when the mapped target is refused by the outbound rules or does not answer',
    }),
  ),
  ...route(
    ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'],
    '/activities/:application_id',
    'hearth-only',
    'the root of the Activity proxy (see /activities/:application_id/*)',
  ),
  ...route(
    ['GET'],
    '/users/@me/application-profiles',
    'hearth-only',
    "the Social SDK's GetUserApplicationProfiles: a library call whose HTTP route the platform does not publish (seed: Library operations)",
  ),
  ...route(
    ['POST'],
    '/applications/:application_id/share-link',
    'hearth-only',
    "the embedded app SDK's shareLink call: an SDK command with no public HTTP route (seed: Errors, custom_id and referrer_id)",
  ),
  ...route(
    ['GET'],
    '/attachments/:channel_id/:attachment_id/:filename',
    'hearth-only',
    "the platform's CDN route of message attachments (an attachment's `url`; GUILDS.md §4.8), served by Hearth itself; not an API route",
  ),
  ...route(
    ['PUT'],
    '/users/@me/primary-guild',
    'hearth-only',
    'wearing a guild tag (primary_guild): the platform sets it from its own client settings and publishes ' +
      'no route; README documents this one',
  ),
  ...route(['GET', 'POST'], '/users/@me/relationships', 'not-in-spec', RELATIONSHIPS),
  ...route(['PUT', 'DELETE'], '/users/@me/relationships/:user_id', 'not-in-spec', RELATIONSHIPS),
  ...route(['GET', 'POST'], '/users/@me/game-relationships', 'not-in-spec', RELATIONSHIPS),
  ...route(['PUT', 'DELETE'], '/users/@me/game-relationships/:user_id', 'not-in-spec', RELATIONSHIPS),
  ...route(
    ['POST'],
    '/channels/:channel_id/call/ring',
    'not-in-spec',
    "ringing a DM call: the platform's client route (issue 18), in neither SPEC nor the docs",
  ),
  ...route(
    ['POST'],
    '/channels/:channel_id/call/stop-ringing',
    'not-in-spec',
    "declining or cancelling a DM call's ring: the platform's client route (issue 18), in neither SPEC nor the docs",
  ),
  ...route(['GET', 'POST'], '/users/:user_id/messages', 'not-in-spec', GAME_DMS),
  ...route(['PATCH', 'DELETE'], '/users/:user_id/messages/:message_id', 'not-in-spec', GAME_DMS),
  ...route(['GET'], '/users/@me/message-summaries', 'not-in-spec', GAME_DMS),
  ...route(
    ['PATCH'],
    '/users/@me/account',
    'not-in-spec',
    'UDOC "Modify Current User Account" (UpdateProvisionalAccountDisplayName, PROTOCOL.md §B.2); not in SPEC',
  ),
  ...route(['GET', 'POST'], '/applications/:application_id/identity-providers', 'not-in-spec', PROVIDERS),
  ...route(
    ['PATCH', 'DELETE'],
    '/applications/:application_id/identity-providers/:provider_id',
    'not-in-spec',
    PROVIDERS,
  ),
  // ── OAuth2 token endpoints: RFC 6749 / RFC 7009, not described by SPEC ──────────────────────────
  ...(['/oauth2/token', '/oauth2/token/revoke'] as const).flatMap((template): AllowlistEntry[] => [
    ...route(['POST'], template, 'not-in-spec', `${NOT_IN_SPEC}: the token endpoints (docs: Topics, OAuth2)`),
    {
      method: 'POST',
      route: template,
      problem: 'body',
      instancePath: '',
      keyword: 'required',
      category: 'not-in-spec',
      reason: 'errors here are RFC 6749 §5.2 bodies ({error, error_description}), not {code, message}',
    },
  ]),
  // ── Hearth is wrong; the fix is larger than a serializer, or owned elsewhere ─────────────────────

  ...(['/errors', '/errors/_errors'] as const).map(
    (instancePath): AllowlistEntry => ({
      method: 'PUT',
      route: '/lobbies/:lobby_id/messages/:message_id/moderation-metadata',
      status: 400,
      problem: 'body',
      instancePath,
      category: 'hearth-gap',
      reason:
        'a metadata object with too many keys gets its own _errors beside the errors of its values; SPEC ' +
        "(ErrorDetails) lets a node be one or the other. Fix in kernel/validation's error tree",
    }),
  ),
];
