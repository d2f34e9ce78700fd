import { readFile } from 'node:fs/promises';
import { FormErrors } from '@hearth/protocol';
import type { FastifyInstance } from 'fastify';
import type { Application } from '../../domains/applications/service.js';
import { invalidForm } from '../../kernel/errors.js';
import { type AppRequest, field, type PortalContext, type Signed } from './context.js';
import type { FieldError } from './html.js';
import { renderGeneralPage, type TeamChoice } from './pages.js';

/**
 * General information: description and tags, the icon (PATCH /applications/@me's rules for each), and the
 * team that owns the application (the teams' transfer rule: the owner of both, for good).
 */
export function generalSection(app: FastifyInstance, ctx: PortalContext): void {
  const { send, guard, attempt } = ctx;
  const { applications, teams, uploads } = ctx.deps;
  const general = async (
    application: Application,
    signed: Signed,
    extra: { errors?: FieldError[]; notice?: string; description?: string; tags?: string } = {},
  ) => {
    let team: TeamChoice | undefined;
    let owned: TeamChoice[] = [];
    if (application.teamId !== null) {
      const found = await teams.get(application.teamId);
      team = found && { id: found.id, name: found.name };
    } else if (application.ownerId === signed.user.id) {
      owned = (await teams.teamsOf(signed.user.id))
        .filter((t) => t.ownerUserId === signed.user.id)
        .map((t) => ({ id: t.id, name: t.name }));
    }
    return (n: string) =>
      renderGeneralPage({ nonce: n, user: signed.page, application, team, teams: owned, ...extra });
  };
  const saved = (application: Application) => `/developers/applications/${application.id}?saved=1`;

  app.get('/developers/applications/:application_id', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const notice = field(request.query, 'saved') !== undefined ? { notice: 'Saved.' } : {};
    return send(reply, 200, await general(guarded.application, guarded.signed, notice));
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
    if (!refused) return reply.redirect(saved(application), 303);
    return send(
      reply,
      refused.status,
      await general(application, signed, { errors: refused.errors, description, tags: tagsText }),
    );
  });

  // A file upload (multipart, the file as `files[0]`), turned into the image data URI the API takes, so the
  // icon is checked and stored exactly as PATCH /applications/@me stores it.
  app.post(
    '/developers/applications/:application_id/icon',
    { config: uploads ? { files: uploads } : {} },
    async (request: AppRequest, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded?.application) return reply;
      const { application, signed } = guarded;
      const file = request.uploads?.find((f) => f.index === 0 && f.size > 0);
      const remove = field(request.body, 'remove') === 'true';
      const refused = await attempt(async () => {
        if (remove) return void (await applications.modifyApplication(application.id, { icon: null }));
        if (!file) throw invalidForm('icon', FormErrors.required());
        const type = file.contentType ?? 'application/octet-stream';
        const bytes = await readFile(file.path);
        await applications.modifyApplication(application.id, {
          icon: `data:${type};base64,${bytes.toString('base64')}`,
        });
      });
      if (!refused) return reply.redirect(saved(application), 303);
      return send(reply, refused.status, await general(application, signed, { errors: refused.errors }));
    },
  );

  app.post('/developers/applications/:application_id/team', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const { application, signed } = guarded;
    const refused = await attempt(async () => {
      await teams.transferApplication({
        teamId: field(request.body, 'team_id') ?? '',
        applicationId: application.id,
        actorId: signed.user.id,
      });
    });
    if (!refused) return reply.redirect(saved(application), 303);
    const current = (await applications.getApplication(application.id)) ?? application;
    return send(reply, refused.status, await general(current, signed, { errors: refused.errors }));
  });
}
