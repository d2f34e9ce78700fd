import { MessageActivityTypes, RpcErrorCodes } from '@hearth/protocol';
import { type ActivityJoinOutcome, InviteRefused } from './launch-join.js';
import { RpcError } from './session.js';

/** What ACCEPT_ACTIVITY_INVITE asks of the agent: accept as the player, then join or launch the game. */
export interface InviteAccepter {
  joinActivityInvite(invite: { inviterId: string; messageId: string }): Promise<ActivityJoinOutcome>;
}

const SNOWFLAKE = /^\d{1,20}$/;

/**
 * ACCEPT_ACTIVITY_INVITE `{type: 1, user_id, message_id, channel_id?, session_id?}` (DAT `RPCAcceptActivityInviteArgs`):
 * the platform client's "Join" on an invite. Answers `{}` once the game has the secret or was launched;
 * a refusal of the server (not this player's invite, a party that is gone) is 4011 Invalid invite.
 */
export async function acceptActivityInviteCommand(
  agent: InviteAccepter,
  args: Record<string, unknown>,
): Promise<Record<string, never>> {
  const { type, user_id: inviterId, message_id: messageId } = args;
  if (type !== MessageActivityTypes.Join)
    throw new RpcError(RpcErrorCodes.InvalidPayload, 'type must be 1 (JOIN)');
  if (typeof inviterId !== 'string' || !SNOWFLAKE.test(inviterId))
    throw new RpcError(RpcErrorCodes.InvalidPayload, 'user_id must be a snowflake');
  if (typeof messageId !== 'string' || !SNOWFLAKE.test(messageId))
    throw new RpcError(RpcErrorCodes.InvalidPayload, 'message_id must be a snowflake');
  try {
    await agent.joinActivityInvite({ inviterId, messageId });
  } catch (error) {
    if (error instanceof InviteRefused) throw new RpcError(RpcErrorCodes.InvalidInvite, error.message);
    throw error;
  }
  return {};
}
