import { BOT_INSTALL_SCOPES, type TeamRole, TeamRoles } from '@hearth/protocol';
import type { UrlMapping } from '../../domains/applications/activities.js';
import type { Application } from '../../domains/applications/service.js';
import { csrfField, errorList, type Html, html, layout } from './html.js';
import { action, applicationPage, notice, type PageBase } from './pages.js';

/** One install type's inputs as the form holds them (what was saved, or what was refused). */
export interface InstallTypeForm {
  enabled: boolean;
  scopes: readonly string[];
  permissions: string;
}

export interface InstallationForm {
  guild: InstallTypeForm;
  user: InstallTypeForm;
  customInstallUrl: string;
}

/** The form of what the application holds: an install type is enabled when its key is present. */
export function installationFormOf(application: Application): InstallationForm {
  const of = (key: '0' | '1'): InstallTypeForm => {
    const entry = application.integrationTypesConfig[key];
    return {
      enabled: entry !== undefined,
      scopes: entry?.oauth2_install_params?.scopes ?? [],
      permissions: entry?.oauth2_install_params?.permissions ?? '',
    };
  };
  return { guild: of('0'), user: of('1'), customInstallUrl: application.customInstallUrl ?? '' };
}

function installType(prefix: 'guild' | 'user', label: string, form: InstallTypeForm, help: string): Html {
  const boxes = BOT_INSTALL_SCOPES.map(
    (scope) =>
      html`<label class="check"><input type="checkbox" name="${prefix}_scopes" value="${scope}"${
        form.scopes.includes(scope) ? html` checked` : ''
      }>${scope}</label>`,
  );
  return html`<section><h2>${label}</h2><p>${help}</p>
<label class="check"><input type="checkbox" id="${prefix}-install" name="${prefix}_install" value="true"${
    form.enabled ? html` checked` : ''
  }>Enabled</label>
<h3>Default install link: scopes</h3>${boxes}
<label for="${prefix}-permissions">Permissions (a bitfield, for the bot scope)</label><input id="${prefix}-permissions" name="${prefix}_permissions" type="text" inputmode="numeric" value="${form.permissions}">
</section>`;
}

/** Installation: `integration_types_config`, its guild entry as `install_params`, and `custom_install_url`. */
export function renderInstallationPage(
  model: PageBase & { application: Application; form: InstallationForm },
): string {
  const { application, form } = model;
  return applicationPage(
    model,
    application,
    'installation',
    html`<form method="post" action="${action(application, '/installation')}">${csrfField(model.user.csrf)}
${installType('guild', 'Guild install', form.guild, 'Installed to a server by a member who may manage it; its install link is the API’s install_params.')}
${installType('user', 'User install', form.user, 'Installed to a user’s account; the bot scope is for guild installs only.')}
<section><h2>Install link</h2>
<p>Either default install links above, or a custom install URL: not both.</p>
<label for="custom-install-url">Custom install URL</label><input id="custom-install-url" name="custom_install_url" type="text" value="${form.customInstallUrl}">
</section>
<button type="submit" id="save-installation">Save</button></form>`,
  );
}

export function renderActivitiesPage(
  model: PageBase & {
    application: Application;
    mappings: readonly UrlMapping[];
    values?: { prefix?: string; target?: string };
  },
): string {
  const { application } = model;
  const csrf = csrfField(model.user.csrf);
  const rows = model.mappings.map(
    (
      m,
    ) => html`<tr data-prefix="${m.prefix}"><td><code>${m.prefix}</code></td><td><code>${m.target}</code></td>
<td><form method="post" action="${action(application, '/activities/mappings/remove')}">${csrf}
<input type="hidden" name="prefix" value="${m.prefix}"><button class="plain" type="submit">Remove</button></form></td></tr>`,
  );
  return applicationPage(
    model,
    application,
    'activities',
    html`<section><h2>URL mappings</h2>
<p>Requests of the Activity to <code>/.proxy/PREFIX/…</code> go to the target of the longest matching prefix.</p>
${
  rows.length > 0
    ? html`<table id="url-mappings"><thead><tr><th>Prefix</th><th>Target</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p id="no-mappings">No mappings yet.</p>`
}
<form method="post" action="${action(application, '/activities/mappings')}">${csrf}
<label for="prefix">Prefix</label><input id="prefix" name="prefix" type="text" value="${model.values?.prefix ?? '/'}">
<label for="target">Target (host and path; https is meant)</label><input id="target" name="target" type="text" value="${
      model.values?.target ?? ''
    }">
<button type="submit" id="add-mapping">Add or replace</button></form></section>`,
  );
}

/** A team as the teams pages list it, with the signed-in user's role in it. */
export interface TeamSummary {
  id: string;
  name: string;
  role: TeamRole;
}

export function renderTeamsPage(model: PageBase & { teams: readonly TeamSummary[]; name?: string }): string {
  const items = model.teams.map(
    (t) => html`<li><a href="/developers/teams/${t.id}">${t.name}</a> <span data-role>${t.role}</span></li>`,
  );
  return layout({
    title: 'Teams',
    nonce: model.nonce,
    user: model.user,
    body: html`<p><a href="/developers">← Applications</a></p><h1>Teams</h1>${notice(model.notice)}
<section><h2>Your teams</h2>${
      items.length > 0 ? html`<ul class="apps" id="teams">${items}</ul>` : html`<p>None yet.</p>`
    }</section>
<section><h2>New team</h2>${errorList(model.errors ?? [])}
<form method="post" action="/developers/teams">${csrfField(model.user.csrf)}
<label for="team-name">Name</label><input id="team-name" name="name" type="text" required value="${model.name ?? ''}">
<button type="submit" id="create-team">Create team</button></form></section>`,
  });
}

export interface TeamMemberRow {
  userId: string;
  name: string;
  role: TeamRole;
}

/** The roles below owner, the ones a member can be given (owner is handed over, not given). */
const GIVEN_ROLES = TeamRoles.filter((r) => r !== 'owner');

function roleSelect(name: string, id: string, selected: TeamRole | undefined, includeOwner: boolean): Html {
  const roles = includeOwner ? TeamRoles : GIVEN_ROLES;
  return html`<select name="${name}" id="${id}">${roles.map(
    (r) => html`<option value="${r}"${r === selected ? html` selected` : ''}>${r}</option>`,
  )}</select>`;
}

export function renderTeamPage(
  model: PageBase & {
    team: { id: string; name: string };
    members: readonly TeamMemberRow[];
    /** The signed-in user's role: what they may do is shown; the service enforces it either way. */
    role: TeamRole;
    canManage: boolean;
    isOwner: boolean;
  },
): string {
  const { team } = model;
  const csrf = csrfField(model.user.csrf);
  const base = `/developers/teams/${team.id}/members`;
  const rows = model.members.map(
    (m) =>
      html`<tr data-member="${m.userId}"><td>${m.name} <code>${m.userId}</code></td><td data-role>${m.role}</td><td>${
        model.canManage && m.role !== 'owner'
          ? html`<form method="post" action="${base}/role">${csrf}<input type="hidden" name="user_id" value="${m.userId}">
${roleSelect('role', `role-${m.userId}`, m.role, model.isOwner)}<button class="plain" type="submit">Change role</button></form>
<form method="post" action="${base}/remove">${csrf}<input type="hidden" name="user_id" value="${m.userId}">
<button class="danger" type="submit">Remove</button></form>`
          : ''
      }</td></tr>`,
  );
  const add = model.canManage
    ? html`<section><h2>Add a member</h2>
<form method="post" action="${base}">${csrf}
<label for="member-user">Username or user ID</label><input id="member-user" name="user" type="text" required>
<label for="member-role">Role</label>${roleSelect('role', 'member-role', 'developer', false)}
<button type="submit" id="add-member">Add</button></form></section>`
    : html`<p id="read-only-note">Your role (${model.role}) lets you see the team, not change its members.</p>`;
  return layout({
    title: team.name,
    nonce: model.nonce,
    user: model.user,
    body: html`<p><a href="/developers/teams">← Teams</a></p><h1 id="team-name-heading">${team.name}</h1>
${notice(model.notice)}${errorList(model.errors ?? [])}
<p>Roles: an owner may do anything and hand the team over; an admin manages developers and read-only members; a developer changes the team’s applications; a read-only member sees them.</p>
<section><h2>Members</h2><table id="members"><thead><tr><th>User</th><th>Role</th><th></th></tr></thead><tbody>${rows}</tbody></table></section>
${add}`,
  });
}
