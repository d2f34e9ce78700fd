import { PinLimits } from '@hearth/protocol';
import { type Static, Type } from 'typebox';

const Snowflake = Type.String({ format: 'snowflake' });

export const PinParams = Type.Object({ channel_id: Snowflake, message_id: Snowflake });

/** GET /channels/{id}/messages/pins (DOCS Get Channel Pins): `before` an ISO8601 pin time, `limit` 1–50. */
export const ListPinsQuery = Type.Object({
  before: Type.Optional(Type.String({ format: 'date-time' })),
  limit: Type.Optional(Type.Integer({ minimum: PinLimits.listMin, maximum: PinLimits.listMax })),
});
export type ListPinsQuery = Static<typeof ListPinsQuery>;
