import type { FastifyInstance } from 'fastify';
import type { Application } from '../../domains/applications/service.js';
import { type AppRequest, field, fieldList, type PortalContext, type Signed } from './context.js';
import type { FieldError } from './html.js';
import {
  type InstallationForm,
  type InstallTypeForm,
  installationFormOf,
  renderInstallationPage,
} from './pages-settings.js';

/** One install type of the form as PATCH /applications/@me takes it: null removes the type. */
function installEntry(form: InstallTypeForm) {
  if (!form.enabled) return null;
  // Scopes or permissions given: a default install link, checked by the API's rules (a scope is needed).
  if (form.scopes.length === 0 && form.permissions === '') return {};
  return { oauth2_install_params: { scopes: form.scopes, permissions: form.permissions || '0' } };
}

/** Installation: `integration_types_config` per install type and `custom_install_url`, by the API's rules. */
export function installationSection(app: FastifyInstance, ctx: PortalContext): void {
  const { send, guard, attempt } = ctx;
  const { applications } = ctx.deps;
  const page =
    (
      application: Application,
      signed: Signed,
      form: InstallationForm,
      extra: { errors?: FieldError[]; notice?: string } = {},
    ) =>
    (n: string) =>
      renderInstallationPage({ nonce: n, user: signed.page, application, form, ...extra });

  app.get('/developers/applications/:application_id/installation', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const { application, signed } = guarded;
    const notice = field(request.query, 'saved') !== undefined ? { notice: 'Saved.' } : {};
    return send(reply, 200, page(application, signed, installationFormOf(application), notice));
  });

  app.post('/developers/applications/:application_id/installation', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const { application, signed } = guarded;
    const typeOf = (prefix: 'guild' | 'user'): InstallTypeForm => ({
      enabled: field(request.body, `${prefix}_install`) === 'true',
      scopes: fieldList(request.body, `${prefix}_scopes`),
      permissions: (field(request.body, `${prefix}_permissions`) ?? '').trim(),
    });
    const form: InstallationForm = {
      guild: typeOf('guild'),
      user: typeOf('user'),
      customInstallUrl: (field(request.body, 'custom_install_url') ?? '').trim(),
    };
    const refused = await attempt(async () => {
      await applications.modifyApplication(application.id, {
        integration_types_config: { '0': installEntry(form.guild), '1': installEntry(form.user) },
        custom_install_url: form.customInstallUrl === '' ? null : form.customInstallUrl,
      });
    });
    if (!refused)
      return reply.redirect(`/developers/applications/${application.id}/installation?saved=1`, 303);
    return send(reply, refused.status, page(application, signed, form, { errors: refused.errors }));
  });
}
