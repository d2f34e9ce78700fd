import type { FeatureContext } from '../client.js';
import { ClientResult, ErrorType } from '../client-result.js';
import { LoggingSeverity } from '../logging.js';
import { RestFailure, type RestRequest } from '../rest/rest-client.js';

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
