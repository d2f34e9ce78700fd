import { type Static, Type } from 'typebox';
import { formErrorTree, HearthError } from '../kernel/errors.js';
import { parse } from '../kernel/validation.js';

/**
 * The fixture document of `hearth seed --file` and `POST /_hearth/seed` (README "Fixtures"): every object
 * under a name of the test's choosing, which is how the output names it and how a second run finds it.
 * References between objects use those names.
 */

const Name = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });
const named = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }), item));
/** Permission bits as a decimal string or a number. */
const Permissions = Type.Union([Type.String({ pattern: '^\\d{1,20}$' }), Type.Integer({ minimum: 0 })]);
const strict = { additionalProperties: false } as const;

const Application = Type.Object(
  {
    name: Type.String({ minLength: 2, maxLength: 32 }),
    redirect_uris: Type.Optional(Type.Array(Type.String())),
    public_client: Type.Optional(Type.Boolean()),
    /** Approval flags by name (`ProvisionalAccountsEnabled`, …), as `hearth apps update --approve`. */
    flags: Type.Optional(Type.Array(Type.String())),
    owner: Type.Optional(Name),
  },
  strict,
);

const User = Type.Object(
  {
    username: Type.String(),
    email: Type.Optional(Type.String()),
    password: Type.Optional(Type.String()),
    global_name: Type.Optional(Type.String()),
  },
  strict,
);

const ProvisionalAccount = Type.Object(
  {
    application: Name,
    external_user_id: Type.String({ minLength: 1 }),
    display_name: Type.Optional(Type.String()),
  },
  strict,
);

const Channel = Type.Object(
  {
    name: Type.String(),
    type: Type.Optional(Type.Integer()),
    topic: Type.Optional(Type.String()),
    parent: Type.Optional(Name),
  },
  strict,
);

const Role = Type.Object(
  { name: Type.String(), permissions: Type.Optional(Permissions), color: Type.Optional(Type.Integer()) },
  strict,
);

const Guild = Type.Object(
  {
    name: Type.String(),
    owner: Name,
    members: Type.Optional(Type.Array(Name)),
    roles: named(Role),
    channels: named(Channel),
    bots: Type.Optional(
      Type.Array(Type.Object({ application: Name, permissions: Type.Optional(Permissions) }, strict)),
    ),
  },
  strict,
);

const Lobby = Type.Object(
  {
    application: Name,
    /** Users or provisional accounts, by fixture name. */
    members: Type.Optional(Type.Array(Name)),
    metadata: Type.Optional(Type.Record(Type.String(), Type.String())),
    idle_timeout_seconds: Type.Optional(Type.Integer()),
  },
  strict,
);

const Sku = Type.Object(
  {
    application: Name,
    name: Type.String(),
    type: Type.Union([Type.Literal('durable'), Type.Literal('consumable'), Type.Literal('subscription')]),
  },
  strict,
);

/** A purchase: a subscription SKU starts a subscription (30-day periods unless `period`). */
const Entitlement = Type.Object(
  { sku: Name, user: Name, period: Type.Optional(Type.String({ pattern: '^(\\d+(ms|s|m|h|d|w))+$' })) },
  strict,
);

export const FixtureDocument = Type.Object(
  {
    applications: named(Application),
    users: named(User),
    provisional_accounts: named(ProvisionalAccount),
    guilds: named(Guild),
    lobbies: named(Lobby),
    /** Pairs of users (by fixture name) who are friends. */
    friendships: Type.Optional(Type.Array(Type.Tuple([Name, Name]))),
    skus: named(Sku),
    entitlements: named(Entitlement),
  },
  strict,
);
export type FixtureDocument = Static<typeof FixtureDocument>;

/**
 * Validates the document: its shape (50035 with the path of each bad field), then every reference by name
 * (the path of the reference and the name it misses).
 */
export function parseFixture(input: unknown): FixtureDocument {
  const doc = parse(FixtureDocument, input ?? {});
  const problems: [string[], string][] = [];
  const has = (section: Record<string, unknown> | undefined, name: string) =>
    section !== undefined && Object.hasOwn(section, name);
  const needs = (
    path: string[],
    kind: string,
    section: Record<string, unknown> | undefined,
    name: string,
  ) => {
    if (!has(section, name)) problems.push([path, `no ${kind} named "${name}" in the fixture`]);
  };
  const people = { ...doc.users, ...doc.provisional_accounts };
  for (const [name, app] of Object.entries(doc.applications ?? {}))
    if (app.owner !== undefined) needs(['applications', name, 'owner'], 'user', doc.users, app.owner);
  for (const [name, account] of Object.entries(doc.provisional_accounts ?? {})) {
    needs(
      ['provisional_accounts', name, 'application'],
      'application',
      doc.applications,
      account.application,
    );
    if (has(doc.users, name)) problems.push([['provisional_accounts', name], 'a user has this name too']);
  }
  for (const [name, guild] of Object.entries(doc.guilds ?? {})) {
    needs(['guilds', name, 'owner'], 'user', doc.users, guild.owner);
    (guild.members ?? []).forEach((member, i) => {
      needs(['guilds', name, 'members', String(i)], 'user', people, member);
    });
    for (const [channel, body] of Object.entries(guild.channels ?? {}))
      if (body.parent !== undefined)
        needs(['guilds', name, 'channels', channel, 'parent'], 'channel', guild.channels, body.parent);
    (guild.bots ?? []).forEach((bot, i) => {
      needs(
        ['guilds', name, 'bots', String(i), 'application'],
        'application',
        doc.applications,
        bot.application,
      );
    });
  }
  for (const [name, lobby] of Object.entries(doc.lobbies ?? {})) {
    needs(['lobbies', name, 'application'], 'application', doc.applications, lobby.application);
    (lobby.members ?? []).forEach((member, i) => {
      needs(['lobbies', name, 'members', String(i)], 'user', people, member);
    });
  }
  (doc.friendships ?? []).forEach((pair, i) => {
    pair.forEach((user, j) => {
      needs(['friendships', String(i), String(j)], 'user', people, user);
    });
  });
  for (const [name, sku] of Object.entries(doc.skus ?? {}))
    needs(['skus', name, 'application'], 'application', doc.applications, sku.application);
  for (const [name, entitlement] of Object.entries(doc.entitlements ?? {})) {
    needs(['entitlements', name, 'sku'], 'SKU', doc.skus, entitlement.sku);
    needs(['entitlements', name, 'user'], 'user', people, entitlement.user);
  }
  if (problems.length > 0) {
    const errors = formErrorTree(
      problems.map(([path, message]) => [path, { code: 'FIXTURE_UNKNOWN_REFERENCE', message }] as const),
    );
    throw new HearthError('InvalidFormBody', { errors });
  }
  return doc;
}
