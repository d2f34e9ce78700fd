import { MessageLimits } from '@hearth/protocol';
import { type Static, Type } from 'typebox';

/** POST /channels/{id}/messages/bulk-delete (OAS `BulkDeleteMessagesRequest`): 2–100 message ids. */
export const BulkDeleteMessages = Type.Object({
  messages: Type.Array(Type.String({ format: 'snowflake' }), {
    minItems: MessageLimits.bulkDeleteMin,
    maxItems: MessageLimits.bulkDeleteMax,
  }),
});
export type BulkDeleteMessages = Static<typeof BulkDeleteMessages>;
