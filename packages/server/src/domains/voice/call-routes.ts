import { GROUP_DM_MAX_USERS } from '@hearth/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { HearthError } from '../../kernel/errors.js';
import { optionalBody } from '../../kernel/validation.js';
import type { DmCalls } from './dm-calls.js';

/** The ring routes are the official client's, for people: bot tokens get 20001, as on other user routes. */
const USER = { auth: { user: true } } as const;

const Snowflake = Type.String({ format: 'snowflake' });
const Recipients = Type.Array(Snowflake, { maxItems: GROUP_DM_MAX_USERS });
const ChannelParams = Type.Object({ channel_id: Snowflake });

/** POST /channels/{id}/call/ring: `recipients` null or absent rings every other recipient. */
export const RingCall = Type.Object({ recipients: Type.Optional(Type.Union([Recipients, Type.Null()])) });
/** POST /channels/{id}/call/stop-ringing. */
export const StopRinging = Type.Object({
  recipients: Type.Array(Snowflake, { minItems: 1, maxItems: GROUP_DM_MAX_USERS }),
});

type Channel = { Params: Static<typeof ChannelParams> };

/** Ringing in a private channel's call (the platform's user routes; undocumented, UDOC). */
export function callRoutes(calls: DmCalls): FastifyPluginAsync {
  return async (app) => {
    app.post<Channel & { Body: Static<typeof RingCall> | undefined }>(
      '/channels/:channel_id/call/ring',
      { config: USER, schema: { params: ChannelParams, body: optionalBody(RingCall) } },
      async (request, reply) => {
        await calls.ring(
          userOf(request.principal),
          request.params.channel_id,
          request.body?.recipients ?? null,
        );
        return reply.code(204).send();
      },
    );
    app.post<Channel & { Body: Static<typeof StopRinging> }>(
      '/channels/:channel_id/call/stop-ringing',
      { config: USER, schema: { params: ChannelParams, body: StopRinging } },
      async (request, reply) => {
        await calls.stopRinging(
          userOf(request.principal),
          request.params.channel_id,
          request.body.recipients,
        );
        return reply.code(204).send();
      },
    );
  };
}

function userOf(principal: { userId: string } | null | undefined): string {
  if (!principal) throw new HearthError('GeneralUnauthorized');
  return principal.userId;
}
