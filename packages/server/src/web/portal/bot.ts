import { ApplicationFlags, Limits } from '@hearth/protocol';
import type { FastifyInstance } from 'fastify';
import type { Application } from '../../domains/applications/service.js';
import { type AppRequest, field, type PortalContext, type Signed } from './context.js';
import type { FieldError } from './html.js';
import { type IntentSwitch, renderBotPage } from './pages.js';

const REVIEW_USERS = Limits.privilegedIntentReviewUsers.toLocaleString('en-US');

/** The privileged intents a developer may switch on (the limited flags; the full ones an operator grants). */
const INTENTS: ReadonlyArray<{ name: string; field: string; limited: bigint; approved: bigint }> = [
  {
    name: 'Presence intent',
    field: 'presence',
    limited: ApplicationFlags.GatewayPresenceLimited,
    approved: ApplicationFlags.GatewayPresence,
  },
  {
    name: 'Server members intent',
    field: 'guild_members',
    limited: ApplicationFlags.GatewayGuildMembersLimited,
    approved: ApplicationFlags.GatewayGuildMembers,
  },
  {
    name: 'Message content intent',
    field: 'message_content',
    limited: ApplicationFlags.GatewayMessageContentLimited,
    approved: ApplicationFlags.GatewayMessageContent,
  },
];

/** Bot: token reset (shown once) and the privileged intents switches with their review rule. */
export function botSection(app: FastifyInstance, ctx: PortalContext): void {
  const { send, guard, attempt } = ctx;
  const { accounts, applications } = ctx.deps;
  const intentsOf = (application: Application): IntentSwitch[] =>
    INTENTS.map((intent) => ({
      name: intent.name,
      field: intent.field,
      enabled: (application.flags & intent.limited) !== 0n,
      approved: (application.flags & intent.approved) !== 0n,
    }));

  const bot = async (
    application: Application,
    signed: Signed,
    extra: { errors?: FieldError[]; notice?: string; newToken?: string } = {},
  ) => {
    const botUser = await accounts.getUser(application.botUserId);
    const reviewed = await applications.privilegedIntentsReviewed(application);
    return (n: string) =>
      renderBotPage({
        nonce: n,
        user: signed.page,
        application,
        botName: botUser?.username ?? application.name,
        intents: intentsOf(application),
        reviewed,
        ...extra,
      });
  };

  app.get('/developers/applications/:application_id/bot', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const saved = field(request.query, 'saved') !== undefined;
    return send(
      reply,
      200,
      await bot(guarded.application, guarded.signed, saved ? { notice: 'Saved.' } : {}),
    );
  });

  app.post('/developers/applications/:application_id/bot/reset-token', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const newToken = await applications.resetBotToken(guarded.application.id);
    return send(
      reply,
      200,
      await bot(guarded.application, guarded.signed, { newToken, notice: 'The bot token was reset.' }),
    );
  });

  app.post('/developers/applications/:application_id/bot/intents', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const { application, signed } = guarded;
    const wanted = INTENTS.filter((intent) => field(request.body, intent.field) === 'true');
    // Seed, Limits: past 10,000 users a privileged intent needs an approved review; none is turned on without.
    const turnedOn = wanted.filter((intent) => (application.flags & intent.limited) === 0n);
    if (turnedOn.length > 0 && !(await applications.privilegedIntentsReviewed(application))) {
      const errors = turnedOn.map((intent) => ({
        field: intent.field,
        message: `${intent.name} cannot be turned on: your application reaches ${REVIEW_USERS} users or more and its privileged intents review is not approved.`,
      }));
      return send(reply, 403, await bot(application, signed, { errors }));
    }
    const flags = wanted.reduce((all, intent) => all | intent.limited, 0n);
    const refused = await attempt(async () => {
      await applications.modifyApplication(application.id, { flags: Number(flags) });
    });
    if (!refused) return reply.redirect(`/developers/applications/${application.id}/bot?saved=1`, 303);
    return send(reply, refused.status, await bot(application, signed, { errors: refused.errors }));
  });
}
