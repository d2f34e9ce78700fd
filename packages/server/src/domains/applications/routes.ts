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
    // Get/Edit Application by id (SPEC /applications/{application_id}): the bot's own application only.
    const byId = async (request: FastifyRequest<{ Params: { application_id: string } }>) => {
      const principal = request.principal;
      if (principal?.kind !== 'bot') throw new HearthError('GeneralUnauthorized');
      if (principal.applicationId !== request.params.application_id) throw new HearthError('MissingAccess');
      return principal.applicationId;
    };
    app.get<{ Params: { application_id: string } }>(
      '/applications/:application_id',
      { ...botOnly, schema: { ...botOnly.schema, params: ApplicationParams } },
      async (request) =>
        applications.toApplicationObject(await applications.requireApplication(await byId(request))),
    );
    app.patch<{ Params: { application_id: string } }>(
      '/applications/:application_id',
      {
        ...botOnly,
        schema: { ...botOnly.schema, params: ApplicationParams, body: ModifyCurrentApplication },
      },
      async (request) =>
        applications.toApplicationObject(
          await applications.modifyApplication(await byId(request), request.body ?? {}),
        ),
    );
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
