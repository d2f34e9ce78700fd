import { RPC_ACTIVITY_TYPES, RpcErrorCodes } from '@hearth/protocol';
import { ActivityInput } from '../domains/presence/schemas.js';
import { compileValidator } from '../kernel/validation.js';
import { type RpcApplication, RpcError } from './session.js';

/** Timestamps below this are seconds (a date in ms has 13 digits; in seconds 10): VOICE-RPC.md §5. */
const SECONDS_BELOW = 1e11;

const checkActivity = compileValidator(ActivityInput);

/**
 * SET_ACTIVITY `{pid, activity}` (PROTOCOL.md §H) to the gateway activity the agent's session sets: named
 * after the game, owned by it (`application_id`), timestamps in ms, checked with the gateway's own rules
 * (§B.8) so that a bad activity is refused here and never closes the agent's gateway session.
 */
export function toGatewayActivity(application: RpcApplication, input: unknown): ActivityInput {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new RpcError(RpcErrorCodes.InvalidPayload, 'activity must be an object');
  }
  const activity = { ...(input as Record<string, unknown>) };
  const type = activity['type'] ?? 0;
  if (typeof type !== 'number' || !RPC_ACTIVITY_TYPES.includes(type)) {
    throw new RpcError(RpcErrorCodes.InvalidPayload, 'activity.type must be one of 0, 2, 3, 5');
  }
  const timestamps = activity['timestamps'];
  if (typeof timestamps === 'object' && timestamps !== null) {
    const converted: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(timestamps as Record<string, unknown>)) {
      converted[name] = typeof value === 'number' && value < SECONDS_BELOW ? Math.round(value * 1000) : value;
    }
    activity['timestamps'] = converted;
  }
  const built = {
    ...activity,
    name: application.name,
    type,
    application_id: application.id,
  };
  if (!checkActivity(built)) {
    const first = checkActivity.errors?.[0];
    const where = first ? `activity${first.instancePath.replaceAll('/', '.')}` : 'activity';
    throw new RpcError(RpcErrorCodes.InvalidPayload, `${where}: ${first?.message ?? 'invalid'}`);
  }
  return built as ActivityInput;
}
