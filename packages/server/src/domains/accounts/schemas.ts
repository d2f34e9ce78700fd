import { Limits } from '@hearth/protocol';
import { Type } from 'typebox';

/** New-style usernames: 2–32 of lowercase letters, digits, `_` and `.`, no `..`. */
export const Username = Type.String({ minLength: 2, maxLength: 32, pattern: '^(?!.*\\.\\.)[a-z0-9_.]+$' });
export const GlobalName = Type.String({ minLength: 1, maxLength: Limits.displayNameMaxLength });
export const Email = Type.String({ format: 'email', maxLength: 254 });
export const Password = Type.String({ minLength: 8, maxLength: 128 });

export const NewUser = Type.Object({
  username: Username,
  email: Email,
  password: Password,
  global_name: Type.Optional(Type.Union([GlobalName, Type.Null()])),
});

/** User object (seed: Records, User); field order as the platform serializes it. */
export const UserObject = Type.Object({
  id: Type.String(),
  username: Type.String(),
  discriminator: Type.String(),
  global_name: Type.Union([Type.String(), Type.Null()]),
  avatar: Type.Union([Type.String(), Type.Null()]),
  bot: Type.Optional(Type.Boolean()),
  /** Hearth: present (true) only on provisional accounts. */
  provisional: Type.Optional(Type.Boolean()),
  public_flags: Type.Integer(),
  flags: Type.Integer(),
  banner: Type.Union([Type.String(), Type.Null()]),
  accent_color: Type.Union([Type.Integer(), Type.Null()]),
  avatar_decoration_data: Type.Null(),
  collectibles: Type.Null(),
  primary_guild: Type.Null(),
  mfa_enabled: Type.Optional(Type.Boolean()),
  locale: Type.Optional(Type.String()),
  premium_type: Type.Optional(Type.Integer()),
  email: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  verified: Type.Optional(Type.Boolean()),
});

export const Login = Type.Object({
  login: Type.String({ minLength: 1, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 128 }),
});

export const SessionObject = Type.Object({ token: Type.String(), user_id: Type.String() });

export const ModifyCurrentUser = Type.Object({
  global_name: Type.Optional(Type.Union([GlobalName, Type.Null()])),
});
