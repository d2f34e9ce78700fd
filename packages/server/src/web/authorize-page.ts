import { SCOPE_DESCRIPTIONS, type Scope } from '@hearth/protocol';

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON safe to embed in a `<script type="application/json">` element. */
function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

const STYLE = `
:root{color-scheme:light dark;font-family:system-ui,sans-serif}
body{margin:0;min-height:100vh;display:grid;place-items:center;background:#2b2d31;color:#f2f3f5}
main{width:min(420px,92vw);background:#313338;border-radius:12px;padding:28px;box-shadow:0 8px 24px #0006}
h1{margin:0 0 4px;font-size:1.4rem}h2{font-size:.8rem;text-transform:uppercase;color:#b5bac1;margin:20px 0 8px}
.sub{margin:0 0 16px;color:#b5bac1}label{display:block;margin:12px 0 4px;font-size:.85rem;color:#b5bac1}
select,input{box-sizing:border-box;width:100%;padding:10px;border-radius:6px;border:0;background:#1e1f22;color:inherit;font-size:1rem}
ul{padding-left:20px;margin:0}li{margin:6px 0}
.actions{display:flex;gap:12px;justify-content:flex-end;margin-top:24px}
button{padding:10px 18px;border-radius:6px;border:0;font-size:.95rem;cursor:pointer;background:#4e5058;color:#fff}
button.primary{background:#5865f2}button.link{background:none;padding:0;color:#00a8fc}
[role=alert]{color:#fa777c;min-height:1.2em}[hidden]{display:none!important}`;

export interface AuthorizePageModel {
  applicationName: string;
  scopes: readonly Scope[];
  /** The authorize request's query string, replayed to POST /api/v10/oauth2/authorize. */
  query: string;
  prompt: string;
  /** Where prompt=none sends a player who is not signed in (`error=login_required`). */
  loginRequiredLocation: string | undefined;
  nonce: string;
}

/** The login and consent screen; its script talks to the public API only. */
export function renderAuthorizePage(model: AuthorizePageModel): string {
  const name = escapeHtml(model.applicationName);
  const scopes = model.scopes.map(
    (s) => `<li data-scope="${escapeHtml(s)}">${escapeHtml(SCOPE_DESCRIPTIONS[s])}</li>`,
  );
  const config = {
    api: '/api/v10',
    query: model.query,
    prompt: model.prompt,
    loginRequiredLocation: model.loginRequiredLocation ?? null,
  };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Authorize ${name} · Hearth</title><style nonce="${model.nonce}">${STYLE}</style></head>
<body><main>
<h1>${name}</h1><p class="sub">wants to access your Hearth account</p>
<section id="login" hidden>
<form id="login-form"><label for="login-email">Email</label><input id="login-email" name="login" type="email" autocomplete="username" required>
<label for="login-password">Password</label><input id="login-password" name="password" type="password" autocomplete="current-password" required>
<p id="login-error" role="alert"></p><div class="actions"><button id="login-submit" class="primary" type="submit">Log in</button></div></form>
</section>
<section id="consent" hidden>
<p>Signed in as <strong id="who"></strong>. <button id="switch" class="link" type="button">Not you?</button></p>
<h2>This will allow ${name} to:</h2><ul id="scopes">${scopes.join('')}</ul>
${model.scopes.includes('bot') ? '<label for="guild">Add to server</label><select id="guild"></select>' : ''}
<p id="consent-error" role="alert"></p>
<div class="actions"><button id="cancel" type="button">Cancel</button><button id="authorize" class="primary" type="button">Authorize</button></div>
</section>
<noscript><p>This page needs JavaScript to sign you in.</p></noscript>
</main>
<script type="application/json" id="config">${embedJson(config)}</script>
<script src="/oauth2/authorize.js" defer></script>
</body></html>`;
}

/** The end of a bot authorization that named no redirect URI. */
export function renderAuthorizedPage(nonce: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorized · Hearth</title><style nonce="${nonce}">${STYLE}</style></head>
<body><main><h1>Authorized</h1><p class="sub">The bot has been added. You can close this page.</p></main></body></html>`;
}

export function renderErrorPage(message: string, nonce: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorization error · Hearth</title><style nonce="${nonce}">${STYLE}</style></head>
<body><main><h1>Something went wrong</h1><p id="error" role="alert">${escapeHtml(message)}</p>
<p class="sub">The application sent an invalid authorization request. You can close this page.</p></main></body></html>`;
}

/** The page's script: sign in with POST /auth/login, then answer with POST /oauth2/authorize. */
export const AUTHORIZE_SCRIPT = `'use strict';
(() => {
  const config = JSON.parse(document.getElementById('config').textContent);
  const $ = (id) => document.getElementById(id);
  const KEY = 'hearth.session';
  let token = sessionStorage.getItem(KEY);
  const call = (path, init) => fetch(config.api + path, init).then(async (r) => ({ ok: r.ok, body: await r.json().catch(() => ({})) }));
  const firstError = (body) => {
    const tree = body.errors || {};
    for (const key of Object.keys(tree)) { const leaf = tree[key]._errors || tree[key]; if (leaf && leaf[0]) return leaf[0].message; }
    return body.message || body.error_description || 'Something went wrong';
  };
  function showLogin() {
    if (config.prompt === 'none' && config.loginRequiredLocation) { location.assign(config.loginRequiredLocation); return; }
    $('consent').hidden = true; $('login').hidden = false; $('login-email').focus();
  }
  async function showConsent() {
    const me = await call('/users/@me', { headers: { authorization: token } });
    if (!me.ok) { token = null; sessionStorage.removeItem(KEY); showLogin(); return; }
    $('who').textContent = me.body.global_name || me.body.username;
    $('login').hidden = true; $('consent').hidden = false;
    const select = $('guild');
    if (select) {
      const preset = new URLSearchParams(config.query).get('guild_id');
      const guilds = await call('/users/@me/guilds', { headers: { authorization: token } });
      for (const guild of guilds.ok ? guilds.body : []) {
        const option = document.createElement('option');
        option.value = guild.id; option.textContent = guild.name; option.selected = guild.id === preset;
        select.append(option);
      }
    }
    if (config.prompt === 'none') decide(true);
  }
  async function decide(authorize) {
    $('authorize').disabled = $('cancel').disabled = true;
    const answer = await call('/oauth2/authorize?' + config.query, {
      method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify($('guild') && $('guild').value ? { authorize, guild_id: $('guild').value } : { authorize }),
    });
    if (answer.ok && answer.body.location) { location.assign(answer.body.location); return; }
    $('consent-error').textContent = firstError(answer.body);
    $('authorize').disabled = $('cancel').disabled = false;
  }
  $('login-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    $('login-error').textContent = '';
    const form = new FormData(event.target);
    const answer = await call('/auth/login', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login: form.get('login'), password: form.get('password') }),
    });
    if (!answer.ok) { $('login-error').textContent = firstError(answer.body); return; }
    token = answer.body.token; sessionStorage.setItem(KEY, token);
    showConsent();
  });
  $('authorize').addEventListener('click', () => decide(true));
  $('cancel').addEventListener('click', () => decide(false));
  $('switch').addEventListener('click', () => { token = null; sessionStorage.removeItem(KEY); showLogin(); });
  if (token) showConsent(); else showLogin();
})();
`;
