/**
 * DAVE behind the voice gateway's end-to-end seam (`../e2ee.ts`): each call's `E2eeCallState` forwards the
 * member's ops to this node's delivery service, keyed by the call's channel.
 */
import { DAVE_PROTOCOL_VERSION, VoiceCloseCodes, VoiceOpcodes } from '@hearth/protocol';
import type { E2eeCall, E2eeCallState, E2eeCalls, E2eeMember } from '../e2ee.js';
import type { DaveMemberLink } from './call.js';
import type { DaveDeliveryService } from './service.js';

const MAX_TRANSITION_ID = 0xffff;

export class DaveE2eeCalls implements E2eeCalls {
  readonly maxProtocolVersion = DAVE_PROTOCOL_VERSION;
  readonly #service: DaveDeliveryService;

  constructor(service: DaveDeliveryService) {
    this.#service = service;
  }

  open(call: E2eeCall): E2eeCallState {
    const service = this.#service;
    const callId = call.channelId;
    // One link per gateway member, so the service tells a user's old session from its new one.
    const links = new WeakMap<E2eeMember, DaveMemberLink>();
    const linkOf = (member: E2eeMember): DaveMemberLink => {
      let link = links.get(member);
      if (link === undefined) {
        link = {
          userId: member.userId,
          sendJson: (op, d) => member.send(op, d),
          sendBinary: (op, payload) => member.sendBinary(op, payload),
        };
        links.set(member, link);
      }
      return link;
    };
    return {
      protocolVersion: (member) =>
        service.join(callId, call.channelId, linkOf(member), member.maxProtocolVersion),
      joined: (member) => void service.described(callId, member.userId),
      left: (member) => void service.leave(callId, linkOf(member)),
      json: (member, op, d) => {
        const transitionId = (d as { transition_id?: unknown } | null)?.transition_id;
        if (
          !Number.isInteger(transitionId) ||
          (transitionId as number) < 0 ||
          (transitionId as number) > MAX_TRANSITION_ID
        ) {
          member.close(VoiceCloseCodes.BadRequest);
          return;
        }
        if (op === VoiceOpcodes.DaveTransitionReady) {
          void service.transitionReady(callId, member.userId, transitionId as number);
        } else if (op === VoiceOpcodes.DaveMlsInvalidCommitWelcome) {
          void service.invalidCommitWelcome(callId, member.userId);
        }
      },
      binary: (member, op, payload) => void service.binary(callId, member.userId, op, payload),
      close: () => void service.forget(callId),
    };
  }
}
