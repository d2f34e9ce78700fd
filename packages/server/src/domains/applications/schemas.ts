import { Type } from 'typebox';

export const RedirectUri = Type.String({ minLength: 1, maxLength: 2048 });

export const NewApplication = Type.Object({
  name: Type.String({ minLength: 2, maxLength: 32 }),
  redirect_uris: Type.Optional(Type.Array(RedirectUri, { maxItems: 10 })),
  public_client: Type.Optional(Type.Boolean()),
  owner_id: Type.Optional(Type.Union([Type.String({ format: 'snowflake' }), Type.Null()])),
});
