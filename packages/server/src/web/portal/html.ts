import type { FormErrorTree } from '@hearth/protocol';
import { escapeHtml } from '../authorize-page.js';

export { escapeHtml };

/** HTML already escaped (or written by us): the only values `html` interpolates as they are. */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

type Interpolated = Html | string | number | null | undefined | false | readonly Interpolated[];

function render(value: Interpolated): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return (value as readonly Interpolated[]).map(render).join('');
  return escapeHtml(String(value));
}

/** A template tag that escapes every interpolated value unless it is `Html`: user values cannot inject markup. */
export function html(strings: TemplateStringsArray, ...values: Interpolated[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** One message of a refused form: the field path as the API names it (`redirect_uris.0`) and its words. */
export interface FieldError {
  field: string;
  message: string;
}

/** The API's error body in words: every leaf of the `errors` tree, or its message alone. */
export function fieldErrors(message: string, tree: FormErrorTree | undefined): FieldError[] {
  const out: FieldError[] = [];
  const walk = (node: FormErrorTree, path: string[]) => {
    for (const leaf of node._errors ?? []) out.push({ field: path.join('.'), message: leaf.message });
    for (const [key, child] of Object.entries(node)) {
      if (key !== '_errors' && child && !Array.isArray(child)) walk(child, [...path, key]);
    }
  };
  if (tree) walk(tree, []);
  return out.length > 0 ? out : [{ field: '', message }];
}

const STYLE = `
:root{color-scheme:light dark;font-family:system-ui,sans-serif}
body{margin:0;background:#2b2d31;color:#f2f3f5}
header{display:flex;gap:16px;align-items:center;padding:12px 24px;background:#1e1f22}
header a{color:#f2f3f5;text-decoration:none;font-weight:600}header form{margin-left:auto}
main{max-width:860px;margin:24px auto;padding:0 16px}
h1{font-size:1.5rem}h2{font-size:1.1rem;margin-top:28px}
nav.tabs{display:flex;gap:8px;flex-wrap:wrap;margin:12px 0 20px}
nav.tabs a{padding:6px 12px;border-radius:6px;background:#313338;color:#dbdee1;text-decoration:none}
nav.tabs a[aria-current=page]{background:#5865f2;color:#fff}
section{background:#313338;border-radius:10px;padding:16px 20px;margin:16px 0}
label{display:block;margin:10px 0 4px;font-size:.9rem;color:#b5bac1}
label.check{display:flex;gap:8px;align-items:center;color:#f2f3f5}
input[type=text],input[type=email],input[type=password],input[type=url],textarea,select{box-sizing:border-box;width:100%;padding:8px;border-radius:6px;border:0;background:#1e1f22;color:inherit;font-size:.95rem}
button{margin-top:12px;padding:8px 16px;border-radius:6px;border:0;background:#5865f2;color:#fff;font-size:.9rem;cursor:pointer}
button.danger{background:#da373c}button.plain{background:#4e5058}
code,.mono{font-family:ui-monospace,monospace;word-break:break-all}
table{width:100%;border-collapse:collapse;font-size:.85rem}td,th{text-align:left;padding:6px;border-bottom:1px solid #3f4147}
ul.apps{list-style:none;padding:0}ul.apps li{margin:8px 0}ul.apps a{color:#00a8fc}
[role=alert]{color:#fa777c}.notice{color:#23a55a}.secret{background:#1e1f22;padding:10px;border-radius:6px}`;

export interface LayoutModel {
  title: string;
  nonce: string;
  /** Signed in: the user's name and the form token of the sign-out button. */
  user?: { name: string; csrf: string } | undefined;
  body: Html;
}

/** Every portal page: header with sign-out, then the body. */
export function layout(model: LayoutModel): string {
  const signOut = model.user
    ? html`<span>${model.user.name}</span><form method="post" action="/developers/logout">
<input type="hidden" name="csrf" value="${model.user.csrf}"><button class="plain" type="submit" id="sign-out">Sign out</button></form>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(model.title)} · Hearth Developer Portal</title><style nonce="${model.nonce}">${STYLE}</style></head>
<body><header><a href="/developers">Hearth Developer Portal</a>${render(signOut)}</header>
<main>${model.body.value}</main>
<script src="/developers/portal.js" defer></script>
</body></html>`;
}

/** The errors of a refused form, each with the field it is about. */
export function errorList(errors: readonly FieldError[]): Html {
  if (errors.length === 0) return html``;
  return html`<ul role="alert" id="errors">${errors.map(
    (e) =>
      html`<li data-field="${e.field}">${e.field ? html`<strong>${e.field}</strong>: ` : ''}${e.message}</li>`,
  )}</ul>`;
}

/** A hidden field with the session's form token: every portal form has one. */
export function csrfField(csrf: string): Html {
  return html`<input type="hidden" name="csrf" value="${csrf}">`;
}

/** The portal's only script: copy buttons (inline script is forbidden by the pages' CSP). */
export const PORTAL_SCRIPT = `'use strict';
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.addEventListener('click', async () => {
    const source = document.getElementById(button.dataset.copy);
    if (!source) return;
    await navigator.clipboard.writeText(source.textContent.trim());
    button.textContent = 'Copied';
  });
}
`;
