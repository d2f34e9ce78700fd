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
  primary_guild: Type.Union([
    Type.Object({
      identity_guild_id: Type.Union([Type.String(), Type.Null()]),
      identity_enabled: Type.Union([Type.Boolean(), Type.Null()]),
      tag: Type.Union([Type.String(), Type.Null()]),
      badge: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
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

/** POST /auth/password: the current password proves the caller; the new one follows the sign-up rule. */
export const ChangePassword = Type.Object({
  password: Type.String({ minLength: 1, maxLength: 128 }),
  new_password: Password,
});

export const SessionObject = Type.Object({ token: Type.String(), user_id: Type.String() });

/** A bot's name: 2–32 characters, without the characters that make mentions and tags (`@`, `#`, `:`, ```). */
export const BotUsername = Type.String({ minLength: 2, maxLength: 32, pattern: '^(?!.*```)[^@#:]+$' });
/** Image data: a `data:image/{type};base64,…` URI, checked by the service; null removes the image. */
const ImageData = Type.Union([Type.String(), Type.Null()]);

/** PATCH /users/@me, as the route reads it; the service checks the body again by the caller's kind. */
export const ModifyCurrentUserBody = Type.Object({
  username: Type.Optional(Type.String()),
  global_name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  avatar: Type.Optional(ImageData),
  banner: Type.Optional(ImageData),
});

/** A person: a new-style username (unique), a display name, images. */
export const ModifyCurrentUser = Type.Object({
  username: Type.Optional(Username),
  global_name: Type.Optional(Type.Union([GlobalName, Type.Null()])),
  avatar: Type.Optional(ImageData),
  banner: Type.Optional(ImageData),
});

/** A bot: its name and images (a bot has no display name of its own). */
export const ModifyCurrentBot = Type.Object({
  username: Type.Optional(BotUsername),
  avatar: Type.Optional(ImageData),
  banner: Type.Optional(ImageData),
});

export const UserParams = Type.Object({ user_id: Type.String({ format: 'snowflake' }) });
