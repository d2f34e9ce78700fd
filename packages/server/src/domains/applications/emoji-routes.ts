import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { HearthError } from '../../kernel/errors.js';
import { UserObject } from '../accounts/schemas.js';
import type { ApplicationEmojisService } from './emojis.js';

const Snowflake = Type.String({ format: 'snowflake' });

export const EmojiObject = Type.Object({
  id: Type.String(),
  name: Type.String(),
  roles: Type.Array(Type.String()),
  user: Type.Optional(UserObject),
  require_colons: Type.Boolean(),
  managed: Type.Boolean(),
  animated: Type.Boolean(),
  available: Type.Boolean(),
});
const AppParams = Type.Object({ application_id: Snowflake });
const EmojiParams = Type.Object({ application_id: Snowflake, emoji_id: Snowflake });
/** Lengths and characters are checked by the service, to answer the platform's messages. */
const CreateEmoji = Type.Object({ name: Type.String(), image: Type.String() });
const ModifyEmoji = Type.Object({ name: Type.Optional(Type.String()) });

type AppRoute = { Params: { application_id: string } };
type EmojiRoute = { Params: { application_id: string; emoji_id: string } };

/** `/applications/{application.id}/emojis…` (DOCS emoji: application emoji routes), for the app's own bot. */
export function applicationEmojiRoutes(emojis: ApplicationEmojisService): FastifyPluginAsync {
  return async (app) => {
    const bot = { auth: { bot: true } };
    /** The bot acting: only its own application's emoji are its to see and change. */
    const ownBot = (request: FastifyRequest<AppRoute>) => {
      const principal = request.principal;
      if (principal?.kind !== 'bot') throw new HearthError('GeneralUnauthorized');
      if (principal.applicationId !== request.params.application_id) throw new HearthError('MissingAccess');
      return principal;
    };

    app.get<AppRoute>(
      '/applications/:application_id/emojis',
      {
        config: bot,
        schema: { params: AppParams, response: { 200: Type.Object({ items: Type.Array(EmojiObject) }) } },
      },
      async (request) => {
        ownBot(request);
        return emojis.list(request.params.application_id);
      },
    );
    app.post<AppRoute & { Body: { name: string; image: string } }>(
      '/applications/:application_id/emojis',
      { config: bot, schema: { params: AppParams, body: CreateEmoji, response: { 201: EmojiObject } } },
      async (request, reply) => {
        const principal = ownBot(request);
        const created = await emojis.create(request.params.application_id, principal.userId, request.body);
        return reply.code(201).send(created);
      },
    );
    app.get<EmojiRoute>(
      '/applications/:application_id/emojis/:emoji_id',
      { config: bot, schema: { params: EmojiParams, response: { 200: EmojiObject } } },
      async (request) => {
        ownBot(request);
        return emojis.get(request.params.application_id, request.params.emoji_id);
      },
    );
    app.patch<EmojiRoute & { Body: { name?: string } }>(
      '/applications/:application_id/emojis/:emoji_id',
      { config: bot, schema: { params: EmojiParams, body: ModifyEmoji, response: { 200: EmojiObject } } },
      async (request) => {
        ownBot(request);
        return emojis.rename(request.params.application_id, request.params.emoji_id, request.body);
      },
    );
    app.delete<EmojiRoute>(
      '/applications/:application_id/emojis/:emoji_id',
      { config: bot, schema: { params: EmojiParams } },
      async (request, reply) => {
        ownBot(request);
        await emojis.delete(request.params.application_id, request.params.emoji_id);
        return reply.code(204).send();
      },
    );
  };
}
