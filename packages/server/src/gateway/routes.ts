import type { FastifyPluginAsync } from 'fastify';
import { GatewayBotObject, GatewayObject } from './schemas.js';
import type { GatewayService } from './service.js';

export function gatewayRoutes(gateway: GatewayService): FastifyPluginAsync {
  return async (app) => {
    app.get('/gateway', { schema: { response: { 200: GatewayObject } } }, async () => ({
      url: gateway.url(),
    }));

    app.get(
      '/gateway/bot',
      { config: { auth: { bot: true } }, schema: { response: { 200: GatewayBotObject } } },
      async (request) => ({
        url: gateway.url(),
        shards: 1,
        session_start_limit: await gateway.sessionStartLimit(request.principal!.userId),
      }),
    );
  };
}
