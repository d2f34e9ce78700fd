import { Limits, WebhookEventTypes } from '@hearth/protocol';
import type { Application } from '../../domains/applications/service.js';
import type { DeliveryLogEntry, EventWebhookSettings } from '../../domains/webhooks/service.js';
import { csrfField, errorList, type FieldError, type Html, html, layout } from './html.js';

export interface PageUser {
  name: string;
  csrf: string;
}

/** What every page of a signed-in user carries. */
export interface PageBase {
  nonce: string;
  user: PageUser;
  errors?: readonly FieldError[];
  notice?: string | undefined;
}

export function notice(text: string | undefined): Html {
  return text ? html`<p class="notice" role="status" id="notice">${text}</p>` : html``;
}

export function renderLoginPage(model: {
  nonce: string;
  loginToken: string;
  login?: string;
  errors?: readonly FieldError[];
}): string {
  return layout({
    title: 'Sign in',
    nonce: model.nonce,
    body: html`<h1>Sign in</h1><section>
<p>Sign in with your Hearth account to manage your applications.</p>
${errorList(model.errors ?? [])}
<form method="post" action="/developers/login">${csrfField(model.loginToken)}
<label for="login">Email</label><input id="login" name="login" type="email" autocomplete="username" required value="${model.login ?? ''}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" id="sign-in">Sign in</button></form></section>`,
  });
}

export function renderApplicationsPage(
  model: PageBase & { applications: readonly Application[]; name?: string },
): string {
  const items = model.applications.map(
    (a) => html`<li><a href="/developers/applications/${a.id}">${a.name}</a> <code>${a.id}</code></li>`,
  );
  return layout({
    title: 'Applications',
    nonce: model.nonce,
    user: model.user,
    body: html`<h1>Applications</h1><p><a href="/developers/teams" id="teams-link">Your teams</a></p>${notice(model.notice)}
<section><h2>Your applications</h2>${
      items.length > 0 ? html`<ul class="apps" id="applications">${items}</ul>` : html`<p>None yet.</p>`
    }</section>
<section><h2>New application</h2>${errorList(model.errors ?? [])}
<form method="post" action="/developers/applications">${csrfField(model.user.csrf)}
<label for="name">Name</label><input id="name" name="name" type="text" required value="${model.name ?? ''}">
<button type="submit" id="create">Create</button></form></section>`,
  });
}

export type Section =
  | 'general'
  | 'installation'
  | 'oauth2'
  | 'bot'
  | 'webhooks'
  | 'social-sdk'
  | 'monetization'
  | 'commands'
  | 'activities';

const SECTIONS: ReadonlyArray<[Section, string, string]> = [
  ['general', 'General information', ''],
  ['installation', 'Installation', '/installation'],
  ['oauth2', 'OAuth2', '/oauth2'],
  ['bot', 'Bot', '/bot'],
  ['webhooks', 'Webhooks', '/webhooks'],
  ['social-sdk', 'Social SDK', '/social-sdk'],
  ['monetization', 'SKUs and entitlements', '/monetization'],
  ['commands', 'Commands', '/commands'],
  ['activities', 'Activities', '/activities'],
];

export function applicationPage(
  base: PageBase,
  application: Application,
  section: Section,
  body: Html,
): string {
  const tabs = SECTIONS.map(
    ([name, label, path]) =>
      html`<a href="/developers/applications/${application.id}${path}"${
        name === section ? html` aria-current="page"` : ''
      }>${label}</a>`,
  );
  return layout({
    title: application.name,
    nonce: base.nonce,
    user: base.user,
    body: html`<p><a href="/developers">← Applications</a></p><h1 id="app-name">${application.name}</h1>
<nav class="tabs">${tabs}</nav>${notice(base.notice)}${errorList(base.errors ?? [])}${body}`,
  });
}

export function action(application: Application, path: string): string {
  return `/developers/applications/${application.id}${path}`;
}

/** A team the general page names: the application's own, or one it may be moved into. */
export interface TeamChoice {
  id: string;
  name: string;
}

export function renderGeneralPage(
  model: PageBase & {
    application: Application;
    description?: string;
    tags?: string;
    /** The team that owns the application, if any. */
    team?: TeamChoice | undefined;
    /** Teams the user owns, into which they may move an application they own alone. */
    teams?: readonly TeamChoice[];
  },
): string {
  const { application } = model;
  const csrf = csrfField(model.user.csrf);
  const icon = application.icon
    ? html`<p><img id="app-icon" src="/app-icons/${application.id}/${application.icon}.png" alt="Application icon" width="96" height="96"></p>`
    : html`<p id="no-icon">No icon yet.</p>`;
  const teamOptions = (model.teams ?? []).map(
    (team) => html`<option value="${team.id}">${team.name}</option>`,
  );
  const team = model.team
    ? html`<p>Owned by the team <a id="app-team" href="/developers/teams/${model.team.id}">${model.team.name}</a>.</p>`
    : teamOptions.length > 0
      ? html`<p>Developed by you alone. Moving it into a team you own cannot be undone.</p>
<form method="post" action="${action(application, '/team')}">${csrf}
<label for="team-id">Team</label><select id="team-id" name="team_id">${teamOptions}</select>
<button type="submit" id="move-to-team">Move into team</button></form>`
      : html`<p>Developed by you alone. <a href="/developers/teams">Create a team</a> to share it.</p>`;
  return applicationPage(
    model,
    application,
    'general',
    html`<section><h2>General information</h2>
<p>Application ID: <code id="application-id">${application.id}</code></p>
<p>Public key: <code id="verify-key">${application.verifyKey}</code></p>
<form method="post" action="${action(application, '/general')}">${csrf}
<label for="description">Description</label><textarea id="description" name="description" rows="4">${
      model.description ?? application.description
    }</textarea>
<label for="tags">Tags (comma-separated, up to 5)</label><input id="tags" name="tags" type="text" value="${
      model.tags ?? application.tags.join(', ')
    }">
<button type="submit" id="save-general">Save</button></form></section>
<section><h2>App icon</h2>${icon}
<form method="post" action="${action(application, '/icon')}" enctype="multipart/form-data">${csrf}
<label for="icon-file">Image (PNG, JPEG, GIF or WebP)</label><input id="icon-file" name="files[0]" type="file" accept="image/png,image/jpeg,image/gif,image/webp">
<label class="check"><input type="checkbox" id="remove-icon" name="remove" value="true">Remove the icon</label>
<button type="submit" id="save-icon">Save icon</button></form></section>
<section><h2>Team</h2>${team}</section>`,
  );
}

/** The authorize-URL generator's choices, as the GET form sent them. */
export interface UrlGenerator {
  scopes: readonly string[];
  redirectUri: string;
  integrationType: string;
  url: string | undefined;
}

export function renderOAuth2Page(
  model: PageBase & {
    application: Application;
    eligibleScopes: readonly string[];
    generator: UrlGenerator;
    /** The secret just reset: rendered in this response only. */
    newSecret?: string;
    redirectUri?: string;
  },
): string {
  const { application, generator } = model;
  const csrf = csrfField(model.user.csrf);
  const uris = application.redirectUris.map(
    (uri, i) => html`<li><code data-redirect-uri>${uri}</code>
<form method="post" action="${action(application, '/oauth2/redirect-uris')}">${csrf}
<input type="hidden" name="remove" value="${String(i)}"><button class="plain" type="submit">Remove</button></form></li>`,
  );
  const secret = model.newSecret
    ? html`<p>Copy the new secret now: it is never shown again.</p>
<p class="secret"><code id="client-secret">${model.newSecret}</code></p>
<button class="plain" type="button" data-copy="client-secret" id="copy-secret">Copy</button>`
    : html`<p>The client secret is stored hashed and cannot be shown. Resetting it stops the old one at once.</p>`;
  const scopeBoxes = model.eligibleScopes.map(
    (scope) =>
      html`<label class="check"><input type="checkbox" name="scope" value="${scope}"${
        generator.scopes.includes(scope) ? html` checked` : ''
      }>${scope}</label>`,
  );
  const redirectOptions = application.redirectUris.map(
    (uri) =>
      html`<option value="${uri}"${uri === generator.redirectUri ? html` selected` : ''}>${uri}</option>`,
  );
  return applicationPage(
    model,
    application,
    'oauth2',
    html`<section><h2>Client information</h2>
<p>Client ID: <code id="client-id">${application.id}</code></p>
<h2>Client secret</h2>${secret}
<form method="post" action="${action(application, '/oauth2/reset-secret')}">${csrf}
<button class="danger" type="submit" id="reset-secret">Reset secret</button></form></section>
<section><h2>Redirects</h2><ul id="redirect-uris">${uris}</ul>
<form method="post" action="${action(application, '/oauth2/redirect-uris')}">${csrf}
<label for="redirect-uri">Add a redirect URI</label><input id="redirect-uri" name="redirect_uri" type="text" value="${
      model.redirectUri ?? ''
    }">
<button type="submit" id="add-redirect">Add</button></form></section>
<section><h2>Public client</h2>
<form method="post" action="${action(application, '/oauth2/public-client')}">${csrf}
<label class="check"><input type="checkbox" id="public-client" name="public_client" value="true"${
      application.publicClient ? html` checked` : ''
    }>Public client (no client secret: PKCE only)</label>
<button type="submit" id="save-public-client">Save</button></form></section>
<section><h2>OAuth2 URL generator</h2>
<form method="get" action="${action(application, '/oauth2')}">${scopeBoxes}
<label for="generator-redirect">Redirect URI</label><select id="generator-redirect" name="redirect_uri"><option value="">(none)</option>${redirectOptions}</select>
<label for="integration-type">Integration type</label><select id="integration-type" name="integration_type">
<option value="">(default)</option><option value="0"${generator.integrationType === '0' ? html` selected` : ''}>Guild install</option>
<option value="1"${generator.integrationType === '1' ? html` selected` : ''}>User install</option></select>
<button type="submit" id="generate">Generate</button></form>
${generator.url ? html`<p class="secret"><code id="generated-url">${generator.url}</code></p>` : ''}</section>`,
  );
}

/** One privileged intent: its self-service (limited) switch and whether an operator granted the full flag. */
export interface IntentSwitch {
  name: string;
  field: string;
  enabled: boolean;
  approved: boolean;
}

export function renderBotPage(
  model: PageBase & {
    application: Application;
    botName: string;
    intents: readonly IntentSwitch[];
    /** False while the application can reach the review threshold without an approved review. */
    reviewed: boolean;
    newToken?: string;
  },
): string {
  const { application } = model;
  const csrf = csrfField(model.user.csrf);
  const token = model.newToken
    ? html`<p>Copy the new token now: it is never shown again.</p>
<p class="secret"><code id="bot-token">${model.newToken}</code></p>
<button class="plain" type="button" data-copy="bot-token" id="copy-token">Copy</button>`
    : html`<p>The token is stored hashed and cannot be shown. Resetting it stops the old one at once.</p>`;
  const switches = model.intents.map(
    (intent) =>
      html`<label class="check"><input type="checkbox" name="${intent.field}" value="true"${
        intent.enabled ? html` checked` : ''
      }>${intent.name}${intent.approved ? ' (approved)' : ''}</label>`,
  );
  const review = model.reviewed
    ? html`<p id="review-state">No review needed: your application reaches fewer than ${Limits.privilegedIntentReviewUsers.toLocaleString('en-US')} users, or its review is approved.</p>`
    : html`<p id="review-state" role="alert">Your application can reach ${Limits.privilegedIntentReviewUsers.toLocaleString('en-US')} users or more: privileged intents need an approved review (reapplied for every year). Until then the gateway refuses them, and new switches cannot be turned on.</p>`;
  return applicationPage(
    model,
    application,
    'bot',
    html`<section><h2>Bot</h2><p>Bot user: <strong id="bot-name">${model.botName}</strong> <code>${application.botUserId}</code></p>
<h2>Token</h2>${token}
<form method="post" action="${action(application, '/bot/reset-token')}">${csrf}
<button class="danger" type="submit" id="reset-token">Reset token</button></form></section>
<section><h2>Privileged gateway intents</h2>${review}
<form method="post" action="${action(application, '/bot/intents')}">${csrf}${switches}
<button type="submit" id="save-intents">Save</button></form></section>`,
  );
}

export function renderWebhooksPage(
  model: PageBase & {
    application: Application;
    settings: EventWebhookSettings;
    log: readonly DeliveryLogEntry[];
    url?: string;
  },
): string {
  const { application, settings } = model;
  const csrf = csrfField(model.user.csrf);
  const types = WebhookEventTypes.map(
    (type) =>
      html`<label class="check"><input type="checkbox" name="event_types" value="${type}"${
        settings.types.includes(type) ? html` checked` : ''
      }>${type}</label>`,
  );
  const rows = model.log.map((entry) => {
    const last = entry.tries.at(-1);
    return html`<tr data-event-id="${entry.id}" data-event-type="${entry.type}"><td><code>${entry.id}</code></td><td>${entry.type}</td>
<td data-status>${entry.status}</td><td>${String(entry.attempts)}</td><td>${
      last ? (last.httpStatus === null ? (last.error ?? '') : String(last.httpStatus)) : ''
    }</td><td>${new Date(entry.createdAt).toISOString()}</td>
<td><form method="post" action="${action(application, '/webhooks/replay')}">${csrf}<input type="hidden" name="event_id" value="${entry.id}">
<button class="plain" type="submit">Replay</button></form></td></tr>`;
  });
  const status =
    settings.status === 2 ? 'enabled' : settings.status === 3 ? 'disabled by the platform' : 'disabled';
  return applicationPage(
    model,
    application,
    'webhooks',
    html`<section><h2>Event webhooks</h2>
<p>Status: <strong id="webhooks-status">${status}</strong>${
      settings.disabledReason ? html` (${settings.disabledReason})` : ''
    }</p>
<p>Hearth sends a signed PING to a new URL; it is saved only if the URL answers 204.</p>
<form method="post" action="${action(application, '/webhooks')}">${csrf}
<label for="webhooks-url">Endpoint URL</label><input id="webhooks-url" name="url" type="text" value="${
      model.url ?? settings.url ?? ''
    }">
<label class="check"><input type="checkbox" id="webhooks-enabled" name="enabled" value="true"${
      settings.status === 2 || settings.url === null ? html` checked` : ''
    }>Enabled</label>
<h2>Events</h2>${types}
<button type="submit" id="save-webhooks">Save</button></form></section>
<section><h2>Delivery log</h2>${
      rows.length > 0
        ? html`<table id="delivery-log"><thead><tr><th>Event</th><th>Type</th><th>Status</th><th>Attempts</th><th>Last answer</th><th>Created</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
        : html`<p id="delivery-log-empty">No events yet.</p>`
    }</section>`,
  );
}

/** An identity provider as the API shows it (GET /applications/{id}/identity-providers). */
export interface ProviderView {
  id: string;
  type: string;
  issuer: string | null;
  client_id: string | null;
  verification_url: string | null;
}

export function renderSocialSdkPage(
  model: PageBase & {
    application: Application;
    provisionalAccounts: boolean;
    communicationApproved: boolean;
    providers: readonly ProviderView[];
    providerTypes: readonly string[];
    values?: Readonly<Record<string, string>>;
  },
): string {
  const { application } = model;
  const csrf = csrfField(model.user.csrf);
  const values = model.values ?? {};
  const providers = model.providers.map(
    (
      p,
    ) => html`<tr data-provider-id="${p.id}"><td>${p.type}</td><td><code>${p.issuer ?? p.verification_url ?? ''}</code></td><td><code>${p.client_id ?? ''}</code></td>
<td><form method="post" action="${action(application, '/social-sdk/identity-providers/remove')}">${csrf}<input type="hidden" name="provider_id" value="${p.id}">
<button class="plain" type="submit">Remove</button></form></td></tr>`,
  );
  const types = model.providerTypes.map(
    (t) => html`<option value="${t}"${values['type'] === t ? html` selected` : ''}>${t}</option>`,
  );
  return applicationPage(
    model,
    application,
    'social-sdk',
    html`<section><h2>Approvals</h2>
<p>Provisional accounts: <strong id="provisional-state">${model.provisionalAccounts ? 'enabled' : 'not enabled'}</strong></p>
<p>Communication features: <strong id="communication-state">${
      model.communicationApproved ? 'approved' : 'pre-approval limits apply'
    }</strong></p>
<p>Both are granted by the platform's operator (<code>hearth apps update</code>).</p></section>
<section><h2>Identity providers</h2>${
      providers.length > 0
        ? html`<table id="providers"><thead><tr><th>Type</th><th>Issuer or verification URL</th><th>Client ID</th><th></th></tr></thead><tbody>${providers}</tbody></table>`
        : html`<p id="providers-empty">None configured.</p>`
    }
<form method="post" action="${action(application, '/social-sdk/identity-providers')}">${csrf}
<label for="provider-type">Type</label><select id="provider-type" name="type">${types}</select>
<label for="provider-issuer">Issuer URL (ID-token providers)</label><input id="provider-issuer" name="issuer" type="text" value="${values['issuer'] ?? ''}">
<label for="provider-client-id">Client ID</label><input id="provider-client-id" name="client_id" type="text" value="${values['client_id'] ?? ''}">
<label for="provider-verification-url">Verification URL (ticket providers)</label><input id="provider-verification-url" name="verification_url" type="text" value="${
      values['verification_url'] ?? ''
    }">
<button type="submit" id="add-provider">Add</button></form></section>`,
  );
}

export interface SkuView {
  id: string;
  name: string;
  slug: string;
  type: number;
}

export interface EntitlementView {
  id: string;
  sku_id: string;
  user_id?: string | undefined;
  guild_id?: string | undefined;
  type: number;
}

const SKU_TYPE_NAMES: Readonly<Record<number, string>> = {
  2: 'durable',
  3: 'consumable',
  5: 'subscription',
  6: 'subscription group',
};

export function renderMonetizationPage(
  model: PageBase & {
    application: Application;
    skus: readonly SkuView[];
    entitlements: readonly EntitlementView[];
    values?: Readonly<Record<string, string>>;
  },
): string {
  const { application } = model;
  const csrf = csrfField(model.user.csrf);
  const values = model.values ?? {};
  const skus = model.skus.map(
    (sku) =>
      html`<tr data-sku-id="${sku.id}"><td>${sku.name}</td><td><code>${sku.id}</code></td><td>${sku.slug}</td><td>${
        SKU_TYPE_NAMES[sku.type] ?? String(sku.type)
      }</td></tr>`,
  );
  const skuOptions = model.skus.map(
    (sku) =>
      html`<option value="${sku.id}"${values['sku_id'] === sku.id ? html` selected` : ''}>${sku.name}</option>`,
  );
  const entitlements = model.entitlements.map(
    (
      e,
    ) => html`<tr data-entitlement-id="${e.id}"><td><code>${e.id}</code></td><td><code>${e.sku_id}</code></td>
<td>${e.user_id ? html`user <code>${e.user_id}</code>` : html`guild <code>${e.guild_id ?? ''}</code>`}</td><td>${
      e.type === 4 ? 'test' : String(e.type)
    }</td><td>${
      e.type === 4
        ? html`<form method="post" action="${action(application, '/monetization/entitlements/delete')}">${csrf}<input type="hidden" name="entitlement_id" value="${e.id}"><button class="plain" type="submit">Delete</button></form>`
        : ''
    }</td></tr>`,
  );
  return applicationPage(
    model,
    application,
    'monetization',
    html`<section><h2>SKUs</h2>${
      skus.length > 0
        ? html`<table id="skus"><thead><tr><th>Name</th><th>ID</th><th>Slug</th><th>Type</th></tr></thead><tbody>${skus}</tbody></table>`
        : html`<p>None yet.</p>`
    }
<form method="post" action="${action(application, '/monetization/skus')}">${csrf}
<label for="sku-name">Name</label><input id="sku-name" name="name" type="text" value="${values['name'] ?? ''}">
<label for="sku-type">Type</label><select id="sku-type" name="type"><option value="durable">durable</option><option value="consumable">consumable</option><option value="subscription">subscription</option></select>
<button type="submit" id="create-sku">Create SKU</button></form></section>
<section><h2>Test entitlements</h2>${
      entitlements.length > 0
        ? html`<table id="entitlements"><thead><tr><th>ID</th><th>SKU</th><th>Owner</th><th>Type</th><th></th></tr></thead><tbody>${entitlements}</tbody></table>`
        : html`<p>None.</p>`
    }
<form method="post" action="${action(application, '/monetization/entitlements')}">${csrf}
<label for="entitlement-sku">SKU</label><select id="entitlement-sku" name="sku_id">${skuOptions}</select>
<label for="entitlement-owner">Owner ID (user or guild)</label><input id="entitlement-owner" name="owner_id" type="text" value="${
      values['owner_id'] ?? ''
    }">
<label for="entitlement-owner-type">Owner type</label><select id="entitlement-owner-type" name="owner_type"><option value="2">user</option><option value="1"${
      values['owner_type'] === '1' ? html` selected` : ''
    }>guild</option></select>
<button type="submit" id="create-entitlement">Grant test entitlement</button></form></section>`,
  );
}

export function renderNotFoundPage(
  nonce: string,
  user: PageUser | undefined,
  what: 'application' | 'team' = 'application',
): string {
  return layout({
    title: 'Not found',
    nonce,
    user,
    body: html`<h1>Not found</h1><p role="alert" id="not-found">There is no such ${what} among yours.</p>
<p><a href="/developers">Back to your applications</a></p>`,
  });
}

export function renderForbiddenPage(nonce: string, message: string): string {
  return layout({
    title: 'Refused',
    nonce,
    body: html`<h1>Refused</h1><p role="alert" id="forbidden">${message}</p><p><a href="/developers">Back to the portal</a></p>`,
  });
}
