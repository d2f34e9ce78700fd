import { randomInt } from 'node:crypto';
import {
  ApplicationFlags,
  ExternalAuthTypes,
  Limits,
  parsePermissions,
  SNOWFLAKE_MAX_PROCESS_ID,
} from '@hearth/protocol';
import { Command, Option } from 'commander';
import { createHearth } from './app.js';
import { applicationCommands } from './cli-applications.js';
import { type Config, ConfigError, type Flags, loadConfig, SETTINGS } from './config.js';
import { addEmulatorCommands, EmulatorCommandError } from './emulator/cli-command.js';
import { HearthError } from './kernel/errors.js';
import {
  RpcCommandError,
  rpcCommand,
  serveRpcOptions,
  startAgent,
  withServeRpcOptions,
} from './rpc/cli-command.js';

/**
 * `hearth serve | migrate | apps create|update|providers add|list|remove | users create|update|connect|ban|unban |
 * guilds create|list|show|add-member|install-bot | keys rotate` (README: Commands).
 */
export function buildProgram(): Command {
  const program = new Command('hearth')
    .description('Hearth: an open social platform for games')
    .showHelpAfterError();

  withServeRpcOptions(
    withSettings(program.command('serve').description('run the HTTP API and gateway'), () => true),
  ).action(async (options: Record<string, unknown>, command: Command) => {
    const config = loadConfig(toFlags(command));
    const rpc = serveRpcOptions(options);
    if (rpc && !rpc.token)
      throw new RpcCommandError('--rpc needs a user token: --rpc-token or HEARTH_RPC_TOKEN');
    const hearth = await createHearth({ config });
    // listen() answers the bound address, with the port 0 resolved and an IPv6 host bracketed.
    const url = await hearth.listen();
    process.stdout.write(`hearth listening on ${url}\n`);
    const agent = rpc ? await startAgent(url, rpc) : undefined;
    let closing = false;
    const stop = (signal: NodeJS.Signals) => {
      if (closing) process.exit(1);
      closing = true;
      hearth.logger.info({ signal }, 'shutting down');
      Promise.resolve(agent?.close())
        .then(() => hearth.close())
        .then(
          () => process.exit(0),
          (error: unknown) => {
            hearth.logger.error({ err: error }, 'shutdown failed');
            process.exit(1);
          },
        );
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

  withSettings(
    program.command('migrate').description('bring the database schema up to date'),
    isStorage,
  ).action(async (_options: unknown, command: Command) => {
    const hearth = await createHearth({ config: loadConfig(toFlags(command), oneShotDefaults(process.env)) });
    await hearth.close();
    process.stdout.write('database is up to date\n');
  });

  const apps = program.command('apps').description('manage applications');
  withSettings(apps.command('create').description('create an application with its bot user'), isStorage)
    .requiredOption('--name <name>', 'application name')
    .option('--redirect-uri <uri>', 'a registered OAuth2 redirect URI (repeatable)', collect, [])
    .option('--public', 'a public client (no secret needed with PKCE)', false)
    .option('--owner <id>', 'the developer (a user id); default: a new developer account without sign-in')
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | string[] | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const created = await hearth.services.applications.createApplication({
          name: options['name'],
          redirect_uris: options['redirectUri'],
          public_client: options['public'] === true,
          ...(typeof options['owner'] === 'string' ? { owner_id: options['owner'] } : {}),
        });
        print(options['json'] === true, {
          id: created.application.id,
          client_secret: created.clientSecret,
          bot_token: created.botToken,
          bot_user_id: created.botUser.id,
          owner_id: created.application.ownerId ?? '',
          public_key: created.application.verifyKey,
        });
      });
    });

  withSettings(
    apps.command('update').description('change approvals, parent, redirect URIs or client type'),
    isStorage,
  )
    .requiredOption('--id <id>', 'application id')
    .option('--redirect-uri <uri>', 'replace the registered redirect URIs (repeatable)', collect, [])
    .option('--rpc-origin <origin>', 'replace the local RPC WebSocket origins (repeatable)', collect, [])
    .option('--public', 'make it a public client')
    .option('--confidential', 'make it a confidential client')
    .option('--parent <id>', 'make it a child of this application (publisher-level linking)')
    .option('--no-parent', 'remove its parent application')
    .option('--approve <flag>', `grant an approval flag (repeatable): ${approvalFlags()}`, collect, [])
    .option('--revoke <flag>', 'withdraw an approval flag (repeatable)', collect, [])
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | string[] | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const redirects = options['redirectUri'] as string[];
        const origins = options['rpcOrigin'] as string[];
        const parent = options['parent'];
        const updated = await hearth.services.applications.adminUpdate(String(options['id']), {
          ...(redirects.length > 0 ? { redirect_uris: redirects } : {}),
          ...(origins.length > 0 ? { rpc_origins: origins } : {}),
          ...(options['public']
            ? { public_client: true }
            : options['confidential']
              ? { public_client: false }
              : {}),
          ...(parent === false
            ? { parent_application_id: null }
            : typeof parent === 'string'
              ? { parent_application_id: parent }
              : {}),
          grant_flags: options['approve'],
          revoke_flags: options['revoke'],
        });
        print(options['json'] === true, {
          id: updated.id,
          public_client: String(updated.publicClient),
          redirect_uris: updated.redirectUris.join(' '),
          ...(origins.length > 0 ? { rpc_origins: updated.rpcOrigins.join(' ') } : {}),
          parent_application_id: updated.parentApplicationId ?? '',
          flags_new: updated.flags.toString(),
        });
      });
    });

  withSettings(
    apps
      .command('approve-intents-review')
      .description('approve the privileged intents review (needed from 10,000 users reached; valid a year)'),
    (key) => isStorage(key) || key === 'now',
  )
    .requiredOption('--id <id>', 'application id')
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const approved = await hearth.services.applications.approveIntentsReview(String(options['id']));
        const at = approved.intentsReviewApprovedAt ?? hearth.clock.now();
        print(options['json'] === true, {
          id: approved.id,
          approved_at: new Date(at).toISOString(),
          expires_at: new Date(at + Limits.privilegedIntentReviewValidMs).toISOString(),
        });
      });
    });

  const users = program.command('users').description('manage users');
  withSettings(users.command('create').description('create a user and a session token'), isStorage)
    .requiredOption('--username <username>', 'unique username (2–32 of a-z 0-9 _ .)')
    .requiredOption('--email <email>', 'email address')
    .requiredOption('--password <password>', 'password (8–128 characters)')
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const { user, token } = await hearth.services.accounts.createUser({
          username: options['username'],
          email: options['email'],
          password: options['password'],
        });
        print(options['json'] === true, { id: user.id, username: user.username, token });
      });
    });

  withSettings(users.command('update').description("set a user's subscription type"), isStorage)
    .requiredOption('--id <id>', 'user id')
    .requiredOption('--premium-type <n>', 'premium_type, read through the approved identify.premium scope')
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const user = await hearth.services.accounts.setPremiumType(
          String(options['id']),
          Number(options['premiumType']),
        );
        print(options['json'] === true, { id: user.id, premium_type: String(user.premiumType) });
      });
    });

  withSettings(
    users.command('connect').description('link an account of another service to a user'),
    isStorage,
  )
    .requiredOption('--id <id>', 'user id')
    .requiredOption('--type <type>', 'service, e.g. steam or battlenet')
    .requiredOption('--external-id <id>', "the user's id on that service")
    .requiredOption('--name <name>', "the user's name on that service")
    .option('--legacy-publisher', 'a legacy game-publisher connection (hidden from 10 July 2026)', false)
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const connection = await hearth.services.accounts.addConnection(String(options['id']), {
          type: String(options['type']),
          id: String(options['externalId']),
          name: String(options['name']),
          legacyPublisher: options['legacyPublisher'] === true,
        });
        print(options['json'] === true, { type: connection.type, id: connection.id, name: connection.name });
      });
    });

  const guilds = program.command('guilds').description('manage guilds');
  withSettings(guilds.command('create').description('create a guild owned by a user'), isStorage)
    .requiredOption('--owner <id>', 'owner user id')
    .requiredOption('--name <name>', 'guild name')
    .option('--banner <hash>', 'banner image hash')
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const banner = options['banner'];
        const guild = await hearth.services.guilds.createGuild(String(options['owner']), {
          name: options['name'],
          ...(typeof banner === 'string' ? { banner } : {}),
        });
        print(options['json'] === true, { id: guild.id });
      });
    });

  withSettings(guilds.command('list').description('list every guild'), isStorage)
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        for (const guild of await hearth.services.guildOperators.list()) {
          print(options['json'] === true, {
            id: guild.id,
            name: guild.name,
            owner_id: guild.owner_id,
            member_count: String(guild.member_count),
          });
        }
      });
    });

  withSettings(guilds.command('show').description('show a guild with its roles and channels'), isStorage)
    .requiredOption('--id <id>', 'guild id')
    .option('--json', 'print JSON (the guild object with channels and member_count)', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const guild = await hearth.services.guildOperators.show(String(options['id']));
        if (options['json'] === true) {
          process.stdout.write(`${JSON.stringify(guild)}\n`);
          return;
        }
        print(false, {
          id: guild.id,
          name: guild.name,
          owner_id: guild.owner_id,
          member_count: String(guild.member_count),
          roles: guild.roles.map((role) => `${role.name} (${role.id})`).join(', '),
          channels: guild.channels.map((channel) => `#${channel.name} (${channel.id})`).join(', '),
        });
      });
    });

  withSettings(guilds.command('add-member').description('add a user to a guild'), isStorage)
    .requiredOption('--id <id>', 'guild id')
    .requiredOption('--user <id>', 'user id')
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const guildId = String(options['id']);
        const userId = String(options['user']);
        const { added } = await hearth.services.guildOperators.addMember(guildId, userId);
        print(options['json'] === true, { guild_id: guildId, user_id: userId, added: String(added) });
      });
    });

  withSettings(
    guilds.command('install-bot').description("add an application's bot to a guild, as the bot scope does"),
    isStorage,
  )
    .requiredOption('--id <id>', 'guild id')
    .requiredOption('--app <id>', 'application id')
    .option('--permissions <bits>', "the managed role's permissions (decimal bitset)", '0')
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const guildId = String(options['id']);
        const permissions = parsePermissions(String(options['permissions']));
        if (permissions === undefined) throw new CommandError('--permissions: a decimal bitset is expected');
        const guild = await hearth.services.guildOperators.show(guildId);
        // Installed as the owner would install it: the same path as the authorize flow.
        const result = await hearth.services.botInstalls.install({
          guildId,
          applicationId: String(options['app']),
          permissions,
          actorId: guild.owner_id,
        });
        print(options['json'] === true, {
          guild_id: guildId,
          application_id: String(options['app']),
          added: String(result.added),
          role_id: result.roleId,
          permissions: permissions.toString(),
        });
      });
    });

  // ---- Provisional accounts: identity providers and bans ----

  const providers = apps
    .command('providers')
    .description("manage an application's external identity providers");
  withSettings(
    providers
      .command('add')
      .description('add an identity provider (validated now: discovery, key set, URL rules)'),
    isProviderCommand,
  )
    .requiredOption('--id <id>', 'application id')
    .requiredOption('--type <type>', `provider type: ${providerTypes()}`)
    .option('--issuer <url>', 'OIDC issuer (ID-token types)')
    .option('--client-id <id>', 'the audience ID tokens must name (ID-token types)')
    .option(
      '--verification-url <url>',
      'verification endpoint (STEAM_SESSION_TICKET, EPIC_ONLINE_SERVICES_ACCESS_TOKEN)',
    )
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const created = await hearth.services.identityProviders.create(String(options['id']), {
          type: options['type'],
          ...(typeof options['issuer'] === 'string' ? { issuer: options['issuer'] } : {}),
          ...(typeof options['clientId'] === 'string' ? { client_id: options['clientId'] } : {}),
          ...(typeof options['verificationUrl'] === 'string'
            ? { verification_url: options['verificationUrl'] }
            : {}),
        });
        print(options['json'] === true, providerLine(created));
      });
    });

  withSettings(providers.command('list').description("list an application's identity providers"), isStorage)
    .requiredOption('--id <id>', 'application id')
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        for (const provider of await hearth.services.identityProviders.list(String(options['id']))) {
          print(options['json'] === true, providerLine(provider));
        }
      });
    });

  withSettings(providers.command('remove').description('remove an identity provider'), isStorage)
    .requiredOption('--id <id>', 'application id')
    .requiredOption('--provider <id>', 'provider id')
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        await hearth.services.identityProviders.remove(String(options['id']), String(options['provider']));
        process.stdout.write('removed\n');
      });
    });

  withSettings(
    users
      .command('ban')
      .description('ban a user: links become restricted provisional accounts, every token ends'),
    isStorage,
  )
    .requiredOption('--id <id>', 'user id')
    .option('--duration <seconds>', 'how long the ban lasts; omitted: permanent')
    .option('--reason <text>', 'why (kept with the ban)')
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const duration = options['duration'];
        const banned = await hearth.services.accountLink.ban(String(options['id']), {
          ...(typeof duration === 'string' ? { duration_seconds: Number(duration) } : {}),
          ...(typeof options['reason'] === 'string' ? { reason: options['reason'] } : {}),
        });
        print(options['json'] === true, {
          user_id: banned.userId,
          expires_at: banned.expiresAt === null ? 'never' : new Date(banned.expiresAt).toISOString(),
        });
      });
    });

  withSettings(users.command('unban').description('lift a ban'), isStorage)
    .requiredOption('--id <id>', 'user id')
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        await hearth.services.accountLink.unban(String(options['id']));
        process.stdout.write('unbanned\n');
      });
    });

  const keys = program.command('keys').description('manage ID-token signing keys');
  withSettings(
    keys.command('rotate').description('sign with a new key; the old one stays published'),
    isStorage,
  )
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        print(options['json'] === true, { kid: await hearth.services.keys.rotate() });
      });
    });

  // ---- webhooks, SKUs, entitlements, subscriptions, search ----
  webhookCommands(program);
  entitlementCommands(program);
  applicationCommands(program, { withSettings, withHearth, print, isStorage });
  searchCommands(program);
  // ---- the local RPC agent ----
  rpcCommand(program);

  addEmulatorCommands(program, {
    withStorageSettings: (command) => withSettings(command, isStorage),
    withHearth: (command, work, config) => withHearth(command, work, config),
  });

  return program;
}

/** `hearth search rebuild`: a guild's message search index is built again by the servers, in batches. */
function searchCommands(program: Command): void {
  const search = program.command('search').description('the guild message search index');
  withSettings(
    search.command('rebuild').description("drop a guild's search index and build it again in the background"),
    isStorage,
  )
    .requiredOption('--guild <id>', 'guild id')
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const guildId = String(options['guild']);
        await hearth.services.searchIndex.rebuild(guildId);
        print(options['json'] === true, { guild_id: guildId, status: 'rebuilding' });
      });
    });
}

/** `hearth webhooks log | replay` (README: Commands). */
function webhookCommands(program: Command): void {
  const webhooks = program.command('webhooks').description('the delivery log of outgoing webhook events');
  withSettings(webhooks.command('log').description("an application's recent events and attempts"), isStorage)
    .requiredOption('--app <id>', 'application id')
    .option('--limit <n>', 'how many events, newest first', '50')
    .option('--json', 'print JSON, one event per line', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const limit = Number(options['limit']);
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
          throw new CommandError('--limit must be an integer from 1 to 1000');
        }
        const entries = await hearth.services.webhooks.log(String(options['app']), limit);
        for (const entry of entries) {
          if (options['json'] === true) {
            process.stdout.write(`${JSON.stringify(entry)}\n`);
            continue;
          }
          const when = new Date(entry.createdAt).toISOString();
          const error = entry.lastError ? ` (${entry.lastError})` : '';
          process.stdout.write(
            `${entry.id} ${when} ${entry.type} ${entry.status} attempts=${entry.attempts}${error}\n`,
          );
          for (const attempt of entry.tries) {
            const answer = attempt.httpStatus ?? attempt.error;
            process.stdout.write(`  ${new Date(attempt.at).toISOString()} ${attempt.url} ${answer}\n`);
          }
        }
      });
    });

  withSettings(
    webhooks.command('replay').description('queue an event again, or every failed and skipped one'),
    isStorage,
  )
    .requiredOption('--app <id>', 'application id')
    .option('--event <id>', 'only this event (whatever became of it)')
    .option('--json', 'print JSON', false)
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      await withHearth(command, async (hearth) => {
        const event = options['event'];
        const queued = await hearth.services.webhooks.replay(
          String(options['app']),
          typeof event === 'string' ? event : undefined,
        );
        if (typeof event === 'string' && queued === 0)
          throw new CommandError(`no finished event ${event} of that application`);
        print(options['json'] === true, { queued: String(queued) });
      });
    });
}

/** `hearth skus create`, `hearth entitlements purchase|migrate`, `hearth subscriptions renew|cancel|end`. */
function entitlementCommands(program: Command): void {
  type Options = Record<string, string | boolean | undefined>;
  const periodMs = (options: Options) => {
    const days = Number(options['periodDays'] ?? 30);
    if (!Number.isFinite(days) || days <= 0 || days > 3660) {
      throw new CommandError('--period-days must be a number of days from 0 (excluded) to 3660');
    }
    return Math.round(days * 24 * 60 * 60 * 1000);
  };

  const skus = program.command('skus').description("manage an application's SKUs");
  withSettings(
    skus.command('create').description('create a SKU (a subscription gets its group twin)'),
    isStorage,
  )
    .requiredOption('--app <id>', 'application id')
    .requiredOption('--name <name>', 'SKU name')
    .requiredOption('--type <type>', 'durable, consumable or subscription')
    .option('--slug <slug>', 'URL slug (default: from the name)')
    .option('--json', 'print JSON', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        const slug = options['slug'];
        const sku = await hearth.services.entitlements.createSku(String(options['app']), {
          name: options['name'],
          type: options['type'],
          ...(typeof slug === 'string' ? { slug } : {}),
        });
        print(options['json'] === true, { id: sku.id, type: String(sku.type), slug: sku.slug });
      });
    });

  const entitlements = program.command('entitlements').description('purchases and entitlements');
  withSettings(
    entitlements
      .command('purchase')
      .description('a player buys a SKU (a subscription SKU starts a subscription)'),
    isStorage,
  )
    .requiredOption('--app <id>', 'application id')
    .requiredOption('--user <id>', 'the buying user')
    .requiredOption('--sku <id>', 'the SKU bought')
    .option('--period-days <n>', 'billing period of a subscription', '30')
    .option('--legacy', 'an APPLICATION_SUBSCRIPTION entitlement as before the migration', false)
    .option('--json', 'print JSON', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        const { entitlement, subscription } = await hearth.services.entitlements.purchase({
          applicationId: String(options['app']),
          userId: String(options['user']),
          skuId: String(options['sku']),
          periodMs: periodMs(options),
          legacy: options['legacy'] === true,
        });
        print(options['json'] === true, {
          entitlement_id: entitlement.id,
          subscription_id: subscription?.id ?? '',
        });
      });
    });
  withSettings(
    entitlements.command('migrate').description('migrate a legacy subscription entitlement to PURCHASE'),
    isStorage,
  )
    .requiredOption('--id <id>', 'entitlement id')
    .option('--json', 'print JSON', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        const entitlement = await hearth.services.entitlements.migrate(String(options['id']));
        print(options['json'] === true, { id: entitlement.id, type: String(entitlement.type) });
      });
    });

  const subscriptions = program.command('subscriptions').description("drive a player's subscription");
  const subscriptionCommand = (
    name: string,
    description: string,
    act: (
      hearth: Awaited<ReturnType<typeof createHearth>>,
      id: string,
      options: Options,
    ) => Promise<SubscriptionLike>,
  ) =>
    withSettings(subscriptions.command(name).description(description), isStorage)
      .requiredOption('--id <id>', 'subscription id')
      .option('--json', 'print JSON', false)
      .action(async (options: Options, command: Command) => {
        await withHearth(command, async (hearth) => {
          const subscription = await act(hearth, String(options['id']), options);
          print(options['json'] === true, {
            id: subscription.id,
            status: String(subscription.status),
            current_period_end: subscription.current_period_end,
            canceled_at: subscription.canceled_at ?? '',
          });
        });
      });
  subscriptionCommand('renew', 'a new billing period begins', (hearth, id, options) =>
    hearth.services.entitlements.renew(id, periodMs(options)),
  ).option('--period-days <n>', 'length of the new period', '30');
  subscriptionCommand('cancel', 'the player cancels: ENDING until the period ends', (hearth, id) =>
    hearth.services.entitlements.cancel(id),
  );
  subscriptionCommand('end', 'the subscription ends now: its entitlement gets ends_at', (hearth, id) =>
    hearth.services.entitlements.end(id),
  );
}

interface SubscriptionLike {
  id: string;
  status: number;
  current_period_end: string;
  canceled_at: string | null;
}

/** The approval flags an operator grants (Hearth's own bits of the application flags). */
function approvalFlags(): string {
  return Object.keys(ApplicationFlags)
    .filter((name) => /(Approved|Enabled|Accepted)$/.test(name))
    .join(', ');
}

/** Provider types an operator may configure (the bot-issued type needs no configuration). */
function providerTypes(): string {
  return Object.values(ExternalAuthTypes)
    .filter((type) => type !== ExternalAuthTypes.DiscordBotIssuedAccessToken)
    .join(', ');
}

function providerLine(provider: {
  id: string;
  type: string;
  issuer: string | null;
  client_id: string | null;
  jwks_uri: string | null;
  verification_url: string | null;
}): Record<string, string> {
  return {
    id: provider.id,
    type: provider.type,
    issuer: provider.issuer ?? '',
    client_id: provider.client_id ?? '',
    jwks_uri: provider.jwks_uri ?? '',
    verification_url: provider.verification_url ?? '',
  };
}

/** Adding a provider fetches it: the CA and loopback settings apply besides storage. */
function isProviderCommand(key: keyof Config): boolean {
  return isStorage(key) || key === 'providerCaFile' || key === 'allowLoopbackUrls';
}

function isStorage(key: keyof Config): boolean {
  return key === 'databaseUrl' || key === 'logLevel' || key === 'redisUrl' || key === 'redisPrefix';
}

/** Adds the flags of the settings table (README: Settings) that a command reads. */
function withSettings(command: Command, include: (key: keyof Config) => boolean): Command {
  for (const setting of SETTINGS) {
    if (!include(setting.key)) continue;
    const option = new Option(`${setting.flag} <value>`, setting.description).env(setting.env);
    command.addOption(option);
  }
  return command;
}

/**
 * The settings given as flags on the command line. Commander names `--database` `database` and so on; map
 * each back to its setting. Commander also reads the `.env()` variables (shown in --help), but loadConfig
 * reads the environment itself, so that an empty variable counts as unset and a bad one is named.
 */
function toFlags(command: Command): Flags {
  const flags: Flags = {};
  for (const setting of SETTINGS) {
    const name = setting.flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const value: unknown = command.getOptionValue(name);
    if (typeof value === 'string' && command.getOptionValueSource(name) === 'cli') flags[setting.key] = value;
  }
  return flags;
}

/**
 * One-shot commands log warnings and worse unless --log-level or HEARTH_LOG_LEVEL says otherwise, and mint
 * their ids under a process id of their own (1–31, unless given): a command beside a server or another
 * command on the same database would otherwise draw the same snowflake in the same millisecond.
 */
function oneShotDefaults(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...env,
    HEARTH_LOG_LEVEL: env['HEARTH_LOG_LEVEL'] || 'warn',
    HEARTH_PROCESS_ID: env['HEARTH_PROCESS_ID'] || String(randomInt(1, SNOWFLAKE_MAX_PROCESS_ID + 1)),
  };
}

async function withHearth(
  command: Command,
  work: (hearth: Awaited<ReturnType<typeof createHearth>>) => Promise<void>,
  overrides: Partial<Config> = {},
): Promise<void> {
  const hearth = await createHearth({
    config: { ...loadConfig(toFlags(command), oneShotDefaults(process.env)), ...overrides },
    // A one-shot command leaves webhook delivery to the servers, which find its events in the queue.
    deliverWebhooks: false,
  });
  try {
    await work(hearth);
  } finally {
    await hearth.close();
  }
}

function print(json: boolean, value: Record<string, string>): void {
  process.stdout.write(
    json
      ? `${JSON.stringify(value)}\n`
      : `${Object.entries(value)
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n')}\n`,
  );
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** A refusal of the CLI itself (a bad option value), told in one line. */
class CommandError extends Error {}

/** Explains a refusal in one line: the setting or field at fault, never a stack trace. */
export function describeFailure(error: unknown): string {
  if (
    error instanceof ConfigError ||
    error instanceof CommandError ||
    error instanceof RpcCommandError ||
    error instanceof EmulatorCommandError
  ) {
    return error.message;
  }
  if (error instanceof HearthError) {
    const fields = error.errors ? ` (${flattenErrors(error.errors).join('; ')})` : '';
    return `${error.message}${fields}`;
  }
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

function flattenErrors(tree: object, path: string[] = []): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(tree)) {
    if (key === '_errors' && Array.isArray(value)) {
      for (const leaf of value as { message: string }[])
        out.push(`${path.join('.') || 'request'}: ${leaf.message}`);
    } else if (value && typeof value === 'object') {
      out.push(...flattenErrors(value, [...path, key]));
    }
  }
  return out;
}

buildProgram()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    process.stderr.write(`hearth: ${describeFailure(error)}\n`);
    process.exit(1);
  });
