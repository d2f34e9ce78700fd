import { Scopes } from '@hearth/protocol';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { HearthError } from '../../kernel/errors.js';
import { optionalBody } from '../../kernel/validation.js';
import {
  ApplicationPath,
  CreateTestEntitlement,
  EntitlementObject,
  EntitlementPath,
  ListEntitlementsQuery,
  ListSubscriptionsQuery,
  SkuObject,
  SkuPath,
  SubscriptionObject,
  SubscriptionPath,
  UserEntitlementsQuery,
} from './schemas.js';
import type { Caller, EntitlementsService } from './service.js';

/** SKUs, entitlements, subscriptions (PROTOCOL.md §I). */
export function entitlementsRoutes(entitlements: EntitlementsService): FastifyPluginAsync {
  return async (app) => {
    const bot = { config: { auth: { bot: true } } };
    const botOrPlayer = { config: { auth: { bot: true, bearer: [Scopes.ApplicationsEntitlements] } } };
    const player = { config: { auth: { bearer: [Scopes.ApplicationsEntitlements] } } };
    const appId = (request: FastifyRequest) => (request.params as { application_id: string }).application_id;
    const entitlementId = (request: FastifyRequest) =>
      (request.params as { entitlement_id: string }).entitlement_id;
    const noContent = (reply: FastifyReply) => reply.code(204).send();

    app.get(
      '/applications/:application_id/skus',
      { ...bot, schema: { params: ApplicationPath, response: { 200: Type.Array(SkuObject) } } },
      async (request) => entitlements.listSkus(callerOf(request), appId(request)),
    );
    app.get(
      '/applications/:application_id/entitlements',
      {
        ...botOrPlayer,
        schema: {
          params: ApplicationPath,
          querystring: ListEntitlementsQuery,
          response: { 200: Type.Array(EntitlementObject) },
        },
      },
      async (request) => entitlements.listEntitlements(callerOf(request), appId(request), request.query),
    );
    app.post(
      '/applications/:application_id/entitlements',
      {
        ...bot,
        schema: {
          params: ApplicationPath,
          body: optionalBody(CreateTestEntitlement),
          response: { 200: EntitlementObject },
        },
      },
      async (request) =>
        entitlements.createTestEntitlement(callerOf(request), appId(request), request.body ?? {}),
    );
    app.get(
      '/applications/:application_id/entitlements/:entitlement_id',
      { ...botOrPlayer, schema: { params: EntitlementPath, response: { 200: EntitlementObject } } },
      async (request) =>
        entitlements.getEntitlement(callerOf(request), appId(request), entitlementId(request)),
    );
    app.delete(
      '/applications/:application_id/entitlements/:entitlement_id',
      { ...bot, schema: { params: EntitlementPath } },
      async (request, reply) => {
        await entitlements.deleteTestEntitlement(callerOf(request), appId(request), entitlementId(request));
        return noContent(reply);
      },
    );
    app.post(
      '/applications/:application_id/entitlements/:entitlement_id/consume',
      { ...bot, schema: { params: EntitlementPath } },
      async (request, reply) => {
        await entitlements.consume(callerOf(request), appId(request), entitlementId(request));
        return noContent(reply);
      },
    );
    app.get(
      '/users/@me/applications/:application_id/entitlements',
      {
        ...player,
        schema: {
          params: ApplicationPath,
          querystring: UserEntitlementsQuery,
          response: { 200: Type.Array(EntitlementObject) },
        },
      },
      async (request) => entitlements.userEntitlements(callerOf(request), appId(request), request.query),
    );
    app.get(
      '/skus/:sku_id/subscriptions',
      {
        ...botOrPlayer,
        schema: {
          params: SkuPath,
          querystring: ListSubscriptionsQuery,
          response: { 200: Type.Array(SubscriptionObject) },
        },
      },
      async (request) =>
        entitlements.listSubscriptions(
          callerOf(request),
          (request.params as { sku_id: string }).sku_id,
          request.query,
        ),
    );
    app.get(
      '/skus/:sku_id/subscriptions/:subscription_id',
      { ...botOrPlayer, schema: { params: SubscriptionPath, response: { 200: SubscriptionObject } } },
      async (request) => {
        const { sku_id, subscription_id } = request.params as { sku_id: string; subscription_id: string };
        return entitlements.getSubscription(callerOf(request), sku_id, subscription_id);
      },
    );
  };
}

function callerOf(request: FastifyRequest): Caller {
  const principal = request.principal;
  if (principal?.kind === 'bot') return { kind: 'bot', applicationId: principal.applicationId };
  if (principal?.kind === 'bearer') {
    return { kind: 'bearer', applicationId: principal.applicationId, userId: principal.userId };
  }
  throw new HearthError('GeneralUnauthorized');
}
