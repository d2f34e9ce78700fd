/**
 * The seam between the Client and its feature modules (lobbies, relationships, messages…): what a feature
 * gets of the client, and the helpers with which it answers the game in ClientResults, never rejections.
 */
import { ClientResult, ErrorType } from './client-result.js';
import { type Logger, LoggingSeverity } from './logging.js';
import { type RestAnswer, RestFailure, type RestRequest } from './rest/rest-client.js';

/**
 * What a feature of the library (lobbies, relationships, messages…) needs of its client: authenticated
 * calls, the gateway's dispatches, the logger and the connected player. Features live in their own
 * modules; the Client's methods delegate to them.
 */
export interface FeatureContext {
  /** A request with the token given to UpdateToken; throws a RestFailure carrying the ClientResult. */
  call(request: RestRequest): Promise<RestAnswer>;
  /** Adds a listener of one dispatch type; every connection, resumed or new, delivers to it. */
  on(event: string, listener: (data: unknown) => void): void;
  readonly logger: Logger;
  /** The connected player's id, known once the client is Ready. */
  currentUserId(): string | undefined;
  /** The application set with SetApplicationId. */
  applicationId(): bigint;
  /** Sends a gateway command on the live connection; false when the client is not Ready. */
  send(op: number, d: unknown): boolean;
}

/** A feature's request as the library reports it: a ClientResult and the body, never a rejection. */
export async function attempt(
  feature: FeatureContext,
  request: RestRequest,
): Promise<{ result: ClientResult; body: unknown }> {
  try {
    const answer = await feature.call(request);
    return { result: ClientResult.success(answer.status), body: answer.body };
  } catch (error) {
    if (error instanceof RestFailure) return { result: error.result, body: undefined };
    return {
      result: new ClientResult({
        type: ErrorType.NetworkError,
        error: String((error as Error)?.message ?? error),
      }),
      body: undefined,
    };
  }
}

export function invalid(error: string): ClientResult {
  return new ClientResult({ type: ErrorType.ValidationError, error });
}

export function notReady(): ClientResult {
  return new ClientResult({ type: ErrorType.ClientNotReady, error: 'the client is not Ready' });
}

/** Runs a game's callback without letting it throw into the library. */
export function safely(feature: FeatureContext, what: string, run: () => void): void {
  try {
    run();
  } catch (thrown) {
    feature.logger.log(LoggingSeverity.Error, `the ${what} callback threw: ${String(thrown)}`);
  }
}
