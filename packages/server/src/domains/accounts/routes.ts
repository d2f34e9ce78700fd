import { Scopes, UserImageLimits } from '@hearth/protocol';
import type { FastifyPluginAsync } from 'fastify';
import type { Static } from 'typebox';
import type { Principal } from '../../http/auth.js';
import { HearthError } from '../../kernel/errors.js';
import { after } from '../../kernel/maybe.js';
import {
  ChangePassword,
  Login,
  ModifyCurrentUserBody,
  NewUser,
  SessionObject,
  UserObject,
  UserParams,
} from './schemas.js';
import { type AccountsService, toUserObject } from './service.js';

/** What the caller may see of their own user: email with a session or `email`, premium with the approved scope. */
function selfView(principal: Principal): { email: boolean; premium: boolean } {
  if (principal.kind === 'bearer') {
    return {
      email: principal.scopes.has(Scopes.Email),
      premium: principal.scopes.has(Scopes.IdentifyPremium),
    };
  }
  return { email: principal.kind === 'user', premium: principal.kind === 'user' };
}

const MODIFY_USER_BODY_BYTES = 2 * Math.ceil(UserImageLimits.maxBytes / 3) * 4 + 64 * 1024;

/** Sign-up and sign-in are tight buckets per caller: they cost a password hash each. */
const PASSWORD_ROUTES = { limit: 10, windowMs: 60_000 };

export function accountsRoutes(accounts: AccountsService): FastifyPluginAsync {
  return async (app) => {
    app.post(
      '/auth/register',
      { config: { rateLimit: PASSWORD_ROUTES }, schema: { body: NewUser, response: { 201: SessionObject } } },
      async (request, reply) => {
        const { user, token } = await accounts.createUser(request.body);
        return reply.code(201).send({ token, user_id: user.id });
      },
    );

    app.post(
      '/auth/login',
      { config: { rateLimit: PASSWORD_ROUTES }, schema: { body: Login, response: { 200: SessionObject } } },
      async (request) => {
        const { user, token } = await accounts.login(request.body);
        return { token, user_id: user.id };
      },
    );

    // A session ends at logout; a password change ends them all and hands the caller a fresh one.
    app.post('/auth/logout', { config: { auth: { user: true } } }, async (request, reply) => {
      await accounts.endSession(String(request.headers.authorization ?? '').trim());
      return reply.code(204).send();
    });

    app.post(
      '/auth/password',
      {
        config: { auth: { user: true }, rateLimit: PASSWORD_ROUTES },
        schema: { body: ChangePassword, response: { 200: SessionObject } },
      },
      async (request) => {
        const { user, token } = await accounts.changePassword(request.principal!.userId, request.body);
        return { token, user_id: user.id };
      },
    );

    app.get(
      '/users/@me',
      {
        config: { auth: { bot: true, user: true, bearer: [Scopes.Identify] } },
        schema: { response: { 200: UserObject } },
      },
      // Answered at once with the user its credential loaded (no promise): the API's most frequent read.
      (request) => {
        const principal = request.principal!;
        return after(accounts.currentUser(principal), (user) => {
          if (!user) throw new HearthError('GeneralUnauthorized');
          return toUserObject(user, selfView(principal));
        });
      },
    );

    app.patch(
      '/users/@me',
      {
        config: { auth: { bot: true, user: true } },
        // Two images of up to 10 MiB each, in base64.
        bodyLimit: MODIFY_USER_BODY_BYTES,
        schema: { body: ModifyCurrentUserBody, response: { 200: UserObject } },
      },
      async (request) => {
        const user = await accounts.modifyUser(request.principal!.userId, request.body ?? {});
        return toUserObject(user, selfView(request.principal!));
      },
    );

    app.get<{ Params: Static<typeof UserParams> }>(
      '/users/:user_id',
      {
        config: { auth: { bot: true, user: true } },
        schema: { params: UserParams, response: { 200: UserObject } },
      },
      async (request) => {
        const user = await accounts.getUser(request.params.user_id);
        if (!user) throw new HearthError('UnknownUser');
        // SPEC `UserResponse` carries `flags` beside `public_flags` for any user.
        return { ...toUserObject(user), flags: user.flags };
      },
    );

    app.get(
      '/users/@me/connections',
      { config: { auth: { user: true, bearer: [Scopes.Connections] } } },
      async (request) => accounts.listConnections(request.principal!.userId),
    );
  };
}
