import type { FastifyInstance } from 'fastify';
import type { Application } from '../../domains/applications/service.js';
import { type AppRequest, field, type PortalContext, type Signed } from './context.js';
import type { FieldError } from './html.js';
import { renderActivitiesPage } from './pages-settings.js';

/** Activities: the URL mappings the Activity proxy follows, by the activities service's rules. */
export function activitiesSection(app: FastifyInstance, ctx: PortalContext): void {
  const { send, guard, attempt } = ctx;
  const { activities } = ctx.deps;
  const page = async (
    application: Application,
    signed: Signed,
    extra: { errors?: FieldError[]; notice?: string; values?: { prefix?: string; target?: string } } = {},
  ) => {
    const mappings = await activities.mappings(application.id);
    return (n: string) =>
      renderActivitiesPage({ nonce: n, user: signed.page, application, mappings, ...extra });
  };
  const saved = (application: Application) => `/developers/applications/${application.id}/activities?saved=1`;

  app.get('/developers/applications/:application_id/activities', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const notice = field(request.query, 'saved') !== undefined ? { notice: 'Saved.' } : {};
    return send(reply, 200, await page(guarded.application, guarded.signed, notice));
  });

  app.post(
    '/developers/applications/:application_id/activities/mappings',
    async (request: AppRequest, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded?.application) return reply;
      const { application, signed } = guarded;
      const prefix = (field(request.body, 'prefix') ?? '').trim();
      const target = (field(request.body, 'target') ?? '').trim();
      const refused = await attempt(async () => {
        await activities.map(application.id, { prefix, target });
      });
      if (!refused) return reply.redirect(saved(application), 303);
      return send(
        reply,
        refused.status,
        await page(application, signed, { errors: refused.errors, values: { prefix, target } }),
      );
    },
  );

  app.post(
    '/developers/applications/:application_id/activities/mappings/remove',
    async (request: AppRequest, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded?.application) return reply;
      const { application, signed } = guarded;
      const refused = await attempt(async () => {
        await activities.unmap(application.id, field(request.body, 'prefix') ?? '');
      });
      if (!refused) return reply.redirect(saved(application), 303);
      return send(reply, refused.status, await page(application, signed, { errors: refused.errors }));
    },
  );
}
