import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { HearthError } from '../kernel/errors.js';
import type { Emulator } from './emulator.js';
import { ActParams, ClockChange, FaultParams, SnapshotParams } from './schemas.js';

/** Where the admin API of emulator mode is served (outside `/api`: no client of the platform calls it). */
export const ADMIN_PREFIX = '/_hearth';

/**
 * The emulator's admin API (README "Emulator mode"). Registered only in emulator mode, so without it every
 * path here is absent (404); with it every call needs `Authorization: Admin <--admin-token>` (401 before
 * anything else is read).
 */
export function emulatorRoutes(emulator: Emulator, adminToken: string | undefined): FastifyPluginAsync {
  return async (app) => {
    app.addHook('onRequest', async (request) => {
      if (!isAdmin(request.headers.authorization, adminToken)) throw new HearthError('GeneralUnauthorized');
    });

    app.get(`${ADMIN_PREFIX}/clock`, async () => emulator.clock());
    app.post(`${ADMIN_PREFIX}/clock`, { schema: { body: ClockChange } }, async (request) =>
      emulator.changeClock((request.body ?? {}) as ClockChange),
    );

    app.post(`${ADMIN_PREFIX}/seed`, async (request) => emulator.seed(request.body));

    app.get(`${ADMIN_PREFIX}/snapshots`, async () => emulator.listSnapshots());
    app.put(`${ADMIN_PREFIX}/snapshots/:name`, { schema: { params: SnapshotParams } }, async (request) =>
      emulator.saveSnapshot((request.params as { name: string }).name),
    );
    app.post(
      `${ADMIN_PREFIX}/snapshots/:name/restore`,
      { schema: { params: SnapshotParams } },
      async (request, reply) => {
        await emulator.restoreSnapshot((request.params as { name: string }).name);
        return reply.code(204).send();
      },
    );
    app.delete(
      `${ADMIN_PREFIX}/snapshots/:name`,
      { schema: { params: SnapshotParams } },
      async (request, reply) => {
        await emulator.deleteSnapshot((request.params as { name: string }).name);
        return reply.code(204).send();
      },
    );

    app.get(`${ADMIN_PREFIX}/faults`, async () => emulator.faults.list());
    app.post(`${ADMIN_PREFIX}/faults`, async (request, reply) =>
      reply.code(201).send(emulator.faults.add(request.body)),
    );
    app.delete(`${ADMIN_PREFIX}/faults`, async (_request, reply) => {
      emulator.faults.clear();
      return reply.code(204).send();
    });
    app.delete(
      `${ADMIN_PREFIX}/faults/:fault_id`,
      { schema: { params: FaultParams } },
      async (request, reply) => {
        if (!emulator.faults.clear((request.params as { fault_id: string }).fault_id))
          throw new HearthError('GeneralNotFound');
        return reply.code(204).send();
      },
    );

    app.get(`${ADMIN_PREFIX}/act`, async () => emulator.actions.list());
    app.post(`${ADMIN_PREFIX}/act/:action`, { schema: { params: ActParams } }, async (request) => ({
      result: await emulator.actions.run((request.params as { action: string }).action, request.body),
    }));
  };
}

/** `Admin <token>`, compared as digests in constant time: neither the secret nor its length leaks. */
export function isAdmin(header: string | undefined, token: string | undefined): boolean {
  if (token === undefined || header === undefined) return false;
  const match = /^Admin\s+(.+)$/.exec(header);
  if (!match?.[1]) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1].trim()), digest(token));
}
