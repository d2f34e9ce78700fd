import type { FastifyInstance } from 'fastify';
import type { Application } from '../../domains/applications/service.js';
import { type AppRequest, field, fieldList, type PortalContext, type Signed, SNOWFLAKE } from './context.js';
import type { FieldError } from './html.js';
import { renderWebhooksPage } from './pages.js';

/** Event webhooks: URL (verified by the signed PING), status, event types, the delivery log and replays. */
export function webhooksSection(app: FastifyInstance, ctx: PortalContext): void {
  const { send, guard, attempt } = ctx;
  const { applications, webhooks } = ctx.deps;

  const webhooksPage = async (
    application: Application,
    signed: Signed,
    extra: { errors?: FieldError[]; notice?: string; url?: string } = {},
  ) => {
    const [settings, log] = await Promise.all([
      webhooks.settings(application.id),
      webhooks.log(application.id),
    ]);
    return (n: string) =>
      renderWebhooksPage({ nonce: n, user: signed.page, application, settings, log, ...extra });
  };

  app.get('/developers/applications/:application_id/webhooks', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const notice =
      field(request.query, 'saved') !== undefined
        ? 'Saved.'
        : field(request.query, 'replayed') !== undefined
          ? 'The event was queued again.'
          : undefined;
    return send(
      reply,
      200,
      await webhooksPage(guarded.application, guarded.signed, notice ? { notice } : {}),
    );
  });

  app.post('/developers/applications/:application_id/webhooks', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const { application, signed } = guarded;
    const url = (field(request.body, 'url') ?? '').trim();
    const enabled = field(request.body, 'enabled') === 'true';
    const refused = await attempt(async () => {
      await applications.modifyApplication(application.id, {
        event_webhooks_url: url === '' ? null : url,
        event_webhooks_status: enabled ? 2 : 1,
        event_webhooks_types: [...new Set(fieldList(request.body, 'event_types'))],
      });
    });
    if (!refused) return reply.redirect(`/developers/applications/${application.id}/webhooks?saved=1`, 303);
    return send(
      reply,
      refused.status,
      await webhooksPage(application, signed, { errors: refused.errors, url }),
    );
  });

  app.post('/developers/applications/:application_id/webhooks/replay', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const { application, signed } = guarded;
    const eventId = field(request.body, 'event_id') ?? '';
    const queued = SNOWFLAKE.test(eventId) ? await webhooks.replay(application.id, eventId) : 0;
    if (queued > 0)
      return reply.redirect(`/developers/applications/${application.id}/webhooks?replayed=1`, 303);
    const errors = [
      {
        field: 'event_id',
        message:
          'This event cannot be replayed: it is not in the delivery log, or it is still waiting for delivery.',
      },
    ];
    return send(reply, 404, await webhooksPage(application, signed, { errors }));
  });
}
