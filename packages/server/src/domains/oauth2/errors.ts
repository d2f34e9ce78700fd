import { type OAuth2ErrorCode, OAuth2ErrorCodes } from '@hearth/protocol';
import type { WireError } from '../../kernel/errors.js';

/**
 * An error of the token and revocation endpoints, in the RFC 6749 §5.2 shape these endpoints answer
 * with instead of the platform's `{code, message}` (PROTOCOL.md §C.5).
 */
export class OAuth2Error extends Error implements WireError {
  readonly error: OAuth2ErrorCode;
  readonly status: number;
  readonly description: string | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(error: OAuth2ErrorCode, description?: string) {
    super(description ?? error);
    this.name = 'OAuth2Error';
    this.error = error;
    this.description = description;
    this.status = error === OAuth2ErrorCodes.InvalidClient ? 401 : 400;
    // RFC 6749 §5.1–5.2: never cached; a 401 names the scheme the client can authenticate with.
    this.headers = {
      'cache-control': 'no-store',
      pragma: 'no-cache',
      ...(this.status === 401 ? { 'www-authenticate': 'Basic realm="hearth"' } : {}),
    };
  }

  body(): { error: string; error_description?: string } {
    return this.description === undefined
      ? { error: this.error }
      : { error: this.error, error_description: this.description };
  }
}

/** A refusal of the authorization endpoint: redirected back to the client, or shown on our error page. */
export class AuthorizeError extends Error {
  readonly error: string;
  /** Where to send the player; absent when the client or the redirect URI cannot be trusted (RFC 6749 §4.1.2.1). */
  readonly target: { redirectUri: string; state: string | undefined } | undefined;
  /** The parameter a refusal without redirect is about. */
  readonly field: 'client_id' | 'redirect_uri';

  constructor(
    error: string,
    description: string,
    target?: { redirectUri: string; state: string | undefined },
    field: 'client_id' | 'redirect_uri' = 'redirect_uri',
  ) {
    super(description);
    this.name = 'AuthorizeError';
    this.error = error;
    this.target = target;
    this.field = field;
  }

  /** The redirect carrying `error`, `error_description` and the echoed `state`. */
  location(): string | undefined {
    if (!this.target) return undefined;
    const url = new URL(this.target.redirectUri);
    url.searchParams.set('error', this.error);
    url.searchParams.set('error_description', this.message);
    if (this.target.state !== undefined) url.searchParams.set('state', this.target.state);
    return url.toString();
  }
}
