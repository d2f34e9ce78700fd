import type { TestHearth } from '../../../../test-support/hearth.js';

/** One answer of the portal: status, the page, where it redirects, and the raw Set-Cookie lines. */
export interface PortalAnswer {
  status: number;
  html: string;
  location: string | null;
  setCookies: string[];
}

/** A browser without a browser: a cookie jar over fetch, following nothing, so each answer is seen. */
export class PortalClient {
  readonly cookies = new Map<string, string>();
  readonly #hearth: TestHearth;

  constructor(hearth: TestHearth) {
    this.#hearth = hearth;
  }

  async get(path: string): Promise<PortalAnswer> {
    return this.#send(path, { method: 'GET' });
  }

  /** POSTs a urlencoded form; repeated keys as arrays. */
  async post(path: string, form: Record<string, string | string[]>): Promise<PortalAnswer> {
    const body = new URLSearchParams();
    for (const [key, value] of Object.entries(form)) {
      for (const one of [value].flat()) body.append(key, one);
    }
    return this.#send(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    });
  }

  /** POSTs a multipart form (a file input's upload), with the file as `files[0]`. */
  async postMultipart(
    path: string,
    form: Record<string, string>,
    file?: { bytes: Buffer; type: string; name: string },
  ): Promise<PortalAnswer> {
    const body = new FormData();
    for (const [key, value] of Object.entries(form)) body.append(key, value);
    if (file) body.append('files[0]', new Blob([file.bytes], { type: file.type }), file.name);
    return this.#send(path, { method: 'POST', body });
  }

  /** The form token of the page (every form carries the same one). */
  static csrfOf(html: string): string {
    const match = /name="csrf" value="([^"]+)"/.exec(html);
    if (!match?.[1]) throw new Error('no form token on the page');
    return match[1];
  }

  /** Signs in through the login form: answers the form token of the session. */
  async signIn(email: string, password = 'a long password'): Promise<string> {
    const login = await this.get('/developers');
    const answer = await this.post('/developers/login', {
      csrf: PortalClient.csrfOf(login.html),
      login: email,
      password,
    });
    if (answer.status !== 303)
      throw new Error(`sign-in refused: ${answer.status} ${answer.html.slice(0, 300)}`);
    return PortalClient.csrfOf((await this.get('/developers')).html);
  }

  async #send(path: string, init: RequestInit): Promise<PortalAnswer> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) {
      headers.set(
        'cookie',
        [...this.cookies].map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('; '),
      );
    }
    const response = await fetch(`${this.#hearth.url}${path}`, { ...init, headers, redirect: 'manual' });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = decodeURIComponent(pair.slice(at + 1));
      if (/Max-Age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return {
      status: response.status,
      html: await response.text(),
      location: response.headers.get('location'),
      setCookies,
    };
  }
}
