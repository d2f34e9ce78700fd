/** What went wrong, in the library's own terms (ClientResult::Type). */
export const ErrorType = {
  None: 0,
  NetworkError: 1,
  HTTPError: 2,
  ClientNotReady: 3,
  Disabled: 4,
  ClientDestroyed: 5,
  ValidationError: 6,
  /** The player cancelled (seed, Errors: told apart from a server authorization error). */
  Aborted: 7,
  /** The authorization server refused the request. */
  AuthorizationFailed: 8,
  RPCError: 9,
} as const;
export type ErrorType = (typeof ErrorType)[keyof typeof ErrorType];

export interface ClientResultInit {
  type: ErrorType;
  error?: string;
  errorCode?: number;
  status?: number;
  responseBody?: string;
  retryable?: boolean;
  retryAfter?: number;
}

/** The outcome every operation reports to its callback (and resolves its Promise with). */
export class ClientResult {
  readonly #init: Required<ClientResultInit>;

  constructor(init: ClientResultInit) {
    this.#init = {
      error: '',
      errorCode: 0,
      status: 0,
      responseBody: '',
      retryable: false,
      retryAfter: 0,
      ...init,
    };
  }

  static success(status = 200): ClientResult {
    return new ClientResult({ type: ErrorType.None, status });
  }

  Successful(): boolean {
    return this.#init.type === ErrorType.None;
  }

  Type(): ErrorType {
    return this.#init.type;
  }

  /** A message for people; for OAuth2 errors, the `error` code (for example `invalid_grant`). */
  Error(): string {
    return this.#init.error;
  }

  /** The platform's JSON error code, when the server sent one. */
  ErrorCode(): number {
    return this.#init.errorCode;
  }

  /** The HTTP status, 0 when no response arrived. */
  Status(): number {
    return this.#init.status;
  }

  ResponseBody(): string {
    return this.#init.responseBody;
  }

  Retryable(): boolean {
    return this.#init.retryable;
  }

  /** Seconds to wait before retrying, when rate limited. */
  RetryAfter(): number {
    return this.#init.retryAfter;
  }

  ToString(): string {
    if (this.Successful()) return 'ClientResult(success)';
    const type = Object.entries(ErrorType).find(([, v]) => v === this.#init.type)?.[0] ?? 'Unknown';
    return `ClientResult(${type}${this.#init.status ? ` ${this.#init.status}` : ''}: ${this.#init.error})`;
  }
}

/** The callback of an operation that answers only a ClientResult. */
export type ResultCallback = (result: ClientResult) => void;
