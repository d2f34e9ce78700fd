/** A client of a running emulator's admin API (`/_hearth/…`, README "Emulator mode"). */
export class AdminClient {
  readonly #base: string;
  readonly #token: string;

  constructor(baseUrl: string, adminToken: string) {
    this.#base = baseUrl.replace(/\/+$/, '');
    this.#token = adminToken;
  }

  /** Calls one admin route; answers the parsed body (undefined for 204), throws on any other status. */
  async call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.#base}/_hearth${path}`, {
      method,
      headers: {
        authorization: `Admin ${this.#token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new AdminError(method, path, response.status, text);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }
}

/** A refusal of the admin API, with its status and the platform's error body. */
export class AdminError extends Error {
  override name = 'AdminError';
  readonly status: number;
  readonly body: string;

  constructor(method: string, path: string, status: number, body: string) {
    super(`${method} /_hearth${path}: ${status} ${body}`);
    this.status = status;
    this.body = body;
  }
}
