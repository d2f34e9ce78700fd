import { AuthorizationTokenType } from './authorization.js';
import { ClientResult } from './client-result.js';
import type { Logger } from './logging.js';

export type TokenExchangeCallback = (
  result: ClientResult,
  accessToken: string,
  refreshToken: string,
  tokenType: AuthorizationTokenType,
  expiresIn: number,
  scopes: string,
) => void;

export interface TokenOutcome {
  result: ClientResult;
  accessToken: string;
  refreshToken: string;
  tokenType: AuthorizationTokenType;
  expiresIn: number;
  scopes: string;
}

/** A token response as the token endpoints send it (OAuth2 and the provisional-account endpoints). */
export interface TokenBody {
  access_token?: string;
  refresh_token?: string | null;
  token_type?: string;
  expires_in?: number;
  scope?: string;
}

/** The outcome of a failed exchange: no tokens, only the result. */
export function noTokens(result: ClientResult): TokenOutcome {
  return {
    result,
    accessToken: '',
    refreshToken: '',
    tokenType: AuthorizationTokenType.Bearer,
    expiresIn: 0,
    scopes: '',
  };
}

/** A successful token response; its tokens are redacted from every later log line. */
export function tokensOf(body: TokenBody, status: number, logger: Logger): TokenOutcome {
  logger.secret(body.access_token);
  logger.secret(body.refresh_token ?? undefined);
  return {
    result: ClientResult.success(status),
    accessToken: body.access_token ?? '',
    refreshToken: body.refresh_token ?? '',
    tokenType: AuthorizationTokenType.Bearer,
    expiresIn: body.expires_in ?? 0,
    scopes: body.scope ?? '',
  };
}

export function reportTokens(callback: TokenExchangeCallback | undefined, outcome: TokenOutcome): void {
  callback?.(
    outcome.result,
    outcome.accessToken,
    outcome.refreshToken,
    outcome.tokenType,
    outcome.expiresIn,
    outcome.scopes,
  );
}
