import type { FastifyInstance } from 'fastify';
import type { Application } from '../../domains/applications/service.js';
import { type AppRequest, field, type PortalContext, type Signed } from './context.js';
import type { FieldError } from './html.js';
import { renderGeneralPage } from './pages.js';

/** General information: description and tags, by PATCH /applications/@me's rules. */
export function generalSection(app: FastifyInstance, ctx: PortalContext): void {
  const { send, guard, attempt } = ctx;
  const { applications } = ctx.deps;
  const general =
    (
      application: Application,
      signed: Signed,
      extra: { errors?: FieldError[]; notice?: string; description?: string; tags?: string } = {},
    ) =>
    (n: string) =>
      renderGeneralPage({ nonce: n, user: signed.page, application, ...extra });

  app.get('/developers/applications/:application_id', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const saved = field(request.query, 'saved') !== undefined;
    return send(reply, 200, general(guarded.application, guarded.signed, saved ? { notice: 'Saved.' } : {}));
  });

  app.post('/developers/applications/:application_id/general', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const { application, signed } = guarded;
    const description = field(request.body, 'description') ?? '';
    const tagsText = field(request.body, 'tags') ?? '';
    const tags = tagsText
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t.length > 0);
    const refused = await attempt(async () => {
      await applications.modifyApplication(application.id, { description, tags });
    });
    if (!refused) return reply.redirect(`/developers/applications/${application.id}?saved=1`, 303);
    return send(
      reply,
      refused.status,
      general(application, signed, { errors: refused.errors, description, tags: tagsText }),
    );
  });
}
