import { MessageLimits } from '@hearth/protocol';
import { type Static, type TSchema, Type } from 'typebox';

/**
 * The body's `attachments` (OAS `MessageAttachmentRequest`; GUILDS.md §4.8): each entry names `files[n]` by
 * `id: n`, or, on edit, an attachment of the message to keep by its id. Other fields of a kept attachment
 * (clients send the whole object back) are allowed and ignored.
 */
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const AttachmentRequest = Type.Object({
  id: Type.Union([Type.String({ pattern: '^[0-9]{1,20}$' }), Type.Integer({ minimum: 0 })]),
  filename: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: MessageLimits.filenameMax }))),
  title: Type.Optional(Nullable(Type.String({ maxLength: MessageLimits.attachmentTitleMax }))),
  description: Type.Optional(Nullable(Type.String({ maxLength: MessageLimits.attachmentDescriptionMax }))),
  is_spoiler: Type.Optional(Nullable(Type.Boolean())),
});
export type AttachmentRequest = Static<typeof AttachmentRequest>;

export const AttachmentRequests = Nullable(
  Type.Array(AttachmentRequest, { maxItems: MessageLimits.attachmentsMax }),
);

/** The field alone, so that its errors name `attachments.{i}…` as in the whole body. */
export const AttachmentsField = Type.Object({ attachments: Type.Optional(AttachmentRequests) });

export const AttachmentParams = Type.Object({
  channel_id: Type.String({ format: 'snowflake' }),
  attachment_id: Type.String({ format: 'snowflake' }),
  filename: Type.String({ minLength: 1 }),
});
export type AttachmentParams = Static<typeof AttachmentParams>;
