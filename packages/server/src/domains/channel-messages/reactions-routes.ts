import type { FastifyPluginAsync } from 'fastify';
import type { Static } from 'typebox';
import type { ReactionsService } from './reactions.js';
import { EmojiParams, ListReactionsQuery, ReactionsParams, UserReactionParams } from './reactions-schemas.js';
import { actorOf } from './routes.js';

/** Reaction routes take bot tokens and user sessions (GUILDS.md §4.10); each answers 204 but the list. */
const MEMBER = { auth: { bot: true, user: true } } as const;

type Message = { Params: Static<typeof ReactionsParams> };
type Emoji = { Params: Static<typeof EmojiParams> };
type UserReaction = { Params: Static<typeof UserReactionParams> };

const BASE = '/channels/:channel_id/messages/:message_id/reactions';

export function reactionsRoutes(reactions: ReactionsService): FastifyPluginAsync {
  return async (app) => {
    app.put<Emoji>(
      `${BASE}/:emoji_name/@me`,
      { config: MEMBER, schema: { params: EmojiParams } },
      async (request, reply) => {
        const { channel_id, message_id, emoji_name } = request.params;
        await reactions.add(actorOf(request), channel_id, message_id, emoji_name);
        return reply.code(204).send();
      },
    );
    app.delete<Emoji>(
      `${BASE}/:emoji_name/@me`,
      { config: MEMBER, schema: { params: EmojiParams } },
      async (request, reply) => {
        const { channel_id, message_id, emoji_name } = request.params;
        const actor = actorOf(request);
        await reactions.removeUser(actor, channel_id, message_id, emoji_name, actor.userId);
        return reply.code(204).send();
      },
    );
    app.delete<UserReaction>(
      `${BASE}/:emoji_name/:user_id`,
      { config: MEMBER, schema: { params: UserReactionParams } },
      async (request, reply) => {
        const { channel_id, message_id, emoji_name, user_id } = request.params;
        await reactions.removeUser(actorOf(request), channel_id, message_id, emoji_name, user_id);
        return reply.code(204).send();
      },
    );
    app.get<Emoji>(
      `${BASE}/:emoji_name`,
      { config: MEMBER, schema: { params: EmojiParams, querystring: ListReactionsQuery } },
      async (request) => {
        const { channel_id, message_id, emoji_name } = request.params;
        return reactions.users(actorOf(request), channel_id, message_id, emoji_name, request.query);
      },
    );
    app.delete<Emoji>(
      `${BASE}/:emoji_name`,
      { config: MEMBER, schema: { params: EmojiParams } },
      async (request, reply) => {
        const { channel_id, message_id, emoji_name } = request.params;
        await reactions.removeEmoji(actorOf(request), channel_id, message_id, emoji_name);
        return reply.code(204).send();
      },
    );
    app.delete<Message>(
      BASE,
      { config: MEMBER, schema: { params: ReactionsParams } },
      async (request, reply) => {
        const { channel_id, message_id } = request.params;
        await reactions.removeAll(actorOf(request), channel_id, message_id);
        return reply.code(204).send();
      },
    );
  };
}
