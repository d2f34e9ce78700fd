import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Static } from 'typebox';
import type { FileUploads } from '../../http/multipart.js';
import { HearthError } from '../../kernel/errors.js';
import { optionalBody } from '../../kernel/validation.js';
import { CreateMessage } from '../channel-messages/schemas.js';
import {
  CallbackParams,
  CallbackQuery,
  InteractionResponse,
  InvokeInteraction,
  WebhookMessageParams,
  WebhookParams,
} from './schemas.js';
import type { InteractionsService } from './service.js';

type Callback = { Params: Static<typeof CallbackParams>; Querystring: Static<typeof CallbackQuery> };
type Webhook = { Params: Static<typeof WebhookParams> };
type WebhookMessage = { Params: Static<typeof WebhookMessageParams> };

/**
 * Interaction routes: the platform client's own `POST /interactions` (user sessions), the callback, and the
 * token's webhook routes, which take no Authorization header (the token in the path is the credential).
 */
export function interactionsRoutes(
  interactions: InteractionsService,
  uploads: FileUploads | undefined,
): FastifyPluginAsync {
  const files = uploads ? { files: uploads } : {};
  return async (app) => {
    const invoke = { body: optionalBody(InvokeInteraction) };
    app.post(
      '/interactions',
      { config: { auth: { user: true }, ...files }, schema: invoke },
      async (request, reply) => {
        const principal = request.principal;
        if (principal?.kind !== 'user') throw new HearthError('GeneralUnauthorized');
        await interactions.invoke(principal.userId, request.body, request.uploads ?? []);
        return reply.code(204).send();
      },
    );
    app.post<Callback>(
      '/interactions/:interaction_id/:interaction_token/callback',
      {
        config: files,
        schema: {
          params: CallbackParams,
          querystring: CallbackQuery,
          body: optionalBody(InteractionResponse),
        },
      },
      async (request, reply) => {
        const { interaction_id, interaction_token } = request.params;
        const answer = await interactions.respond(
          interaction_id,
          interaction_token,
          request.body,
          request.query,
          request.uploads ?? [],
        );
        return request.query.with_response === true ? answer : reply.code(204).send();
      },
    );
    app.post<Webhook>(
      '/webhooks/:application_id/:interaction_token',
      // A follow-up is a message the app's bot sends in the interaction's place, with a message's body.
      { config: files, schema: { params: WebhookParams, body: optionalBody(CreateMessage) } },
      async (request) =>
        interactions.followup(
          request.params.application_id,
          request.params.interaction_token,
          request.body,
          request.uploads ?? [],
        ),
    );
    app.get<WebhookMessage>(
      '/webhooks/:application_id/:interaction_token/messages/:message_id',
      { schema: { params: WebhookMessageParams } },
      async (request) =>
        interactions.getMessage(
          request.params.application_id,
          request.params.interaction_token,
          request.params.message_id,
        ),
    );
    app.patch<WebhookMessage>(
      '/webhooks/:application_id/:interaction_token/messages/:message_id',
      { config: files, schema: { params: WebhookMessageParams } },
      async (request) =>
        interactions.editMessage(
          request.params.application_id,
          request.params.interaction_token,
          request.params.message_id,
          request.body,
          request.uploads ?? [],
        ),
    );
    app.delete<WebhookMessage>(
      '/webhooks/:application_id/:interaction_token/messages/:message_id',
      { schema: { params: WebhookMessageParams } },
      async (request, reply: FastifyReply) => {
        await interactions.deleteMessage(
          request.params.application_id,
          request.params.interaction_token,
          request.params.message_id,
        );
        return reply.code(204).send();
      },
    );
  };
}
