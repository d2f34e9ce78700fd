import type { FastifyInstance } from 'fastify';
import type { Application } from '../../domains/applications/service.js';
import { HearthError } from '../../kernel/errors.js';
import { type AppRequest, field, type PortalContext, type Signed, SNOWFLAKE } from './context.js';
import type { FieldError } from './html.js';
import { renderMonetizationPage } from './pages.js';

/** SKUs and test entitlements (PROTOCOL.md §I), as the application's bot would manage them. */
export function monetizationSection(app: FastifyInstance, ctx: PortalContext): void {
  const { send, guard, attempt } = ctx;
  const { deps } = ctx;

  const monetization = async (
    application: Application,
    signed: Signed,
    extra: { errors?: FieldError[]; notice?: string; values?: Record<string, string> } = {},
  ) => {
    const caller = { kind: 'bot' as const, applicationId: application.id };
    const [skus, entitlements] = await Promise.all([
      deps.entitlements.listSkus(caller, application.id),
      deps.entitlements.listEntitlements(caller, application.id, {}),
    ]);
    return (n: string) =>
      renderMonetizationPage({ nonce: n, user: signed.page, application, skus, entitlements, ...extra });
  };

  app.get('/developers/applications/:application_id/monetization', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const saved = field(request.query, 'saved') !== undefined;
    return send(
      reply,
      200,
      await monetization(guarded.application, guarded.signed, saved ? { notice: 'Saved.' } : {}),
    );
  });

  const monetizationForm = (
    path: string,
    fields: readonly string[],
    run: (application: Application, values: Record<string, string>) => Promise<unknown>,
  ) =>
    app.post(
      `/developers/applications/:application_id/monetization/${path}`,
      async (request: AppRequest, reply) => {
        const guarded = await guard(request, reply);
        if (!guarded?.application) return reply;
        const { application, signed } = guarded;
        const values: Record<string, string> = {};
        for (const name of fields) {
          const value = field(request.body, name)?.trim();
          if (value !== undefined) values[name] = value;
        }
        const refused = await attempt(async () => {
          await run(application, values);
        });
        if (!refused)
          return reply.redirect(`/developers/applications/${application.id}/monetization?saved=1`, 303);
        return send(
          reply,
          refused.status,
          await monetization(application, signed, { errors: refused.errors, values }),
        );
      },
    );

  monetizationForm('skus', ['name', 'type'], (application, values) =>
    deps.entitlements.createSku(application.id, values),
  );
  monetizationForm('entitlements', ['sku_id', 'owner_id', 'owner_type'], (application, values) =>
    deps.entitlements.createTestEntitlement({ kind: 'bot', applicationId: application.id }, application.id, {
      ...values,
      // The form sends text; the API's body has the number (1 guild, 2 user).
      ...(values['owner_type'] !== undefined && /^\d$/.test(values['owner_type'])
        ? { owner_type: Number(values['owner_type']) }
        : {}),
    }),
  );
  monetizationForm('entitlements/delete', ['entitlement_id'], async (application, values) => {
    const id = values['entitlement_id'] ?? '';
    if (!SNOWFLAKE.test(id)) throw new HearthError('UnknownEntitlement');
    await deps.entitlements.deleteTestEntitlement(
      { kind: 'bot', applicationId: application.id },
      application.id,
      id,
    );
  });
}
