import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { HearthError } from '../../kernel/errors.js';
import {
  ApplicationObject,
  ApplicationParams,
  ModifyCurrentApplication,
  RpcApplicationObject,
} from './schemas.js';
import type { ApplicationsService } from './service.js';

export function applicationsRoutes(applications: ApplicationsService): FastifyPluginAsync {
  return async (app) => {
    const current = async (request: FastifyRequest) => {
      const principal = request.principal;
      if (principal?.kind !== 'bot') throw new HearthError('GeneralUnauthorized');
      return applications.toApplicationObject(await applications.requireApplication(principal.applicationId));
    };
    const botOnly = { config: { auth: { bot: true } }, schema: { response: { 200: ApplicationObject } } };

    app.get('/oauth2/applications/@me', botOnly, current);
    // The local RPC agent reads a game's name and RPC origins before serving it (PROTOCOL.md §H): public.
    app.get<{ Params: { application_id: string } }>(
      '/applications/:application_id/rpc',
      { schema: { params: ApplicationParams, response: { 200: RpcApplicationObject } } },
      async (request) => applications.toRpcApplicationObject(request.params.application_id),
    );
    app.get('/applications/@me', botOnly, current);
    app.patch(
      '/applications/@me',
      { ...botOnly, schema: { ...botOnly.schema, body: ModifyCurrentApplication } },
      async (request) => {
        const principal = request.principal;
        if (principal?.kind !== 'bot') throw new HearthError('GeneralUnauthorized');
        const updated = await applications.modifyApplication(principal.applicationId, request.body ?? {});
        return applications.toApplicationObject(updated);
      },
    );
  };
}
