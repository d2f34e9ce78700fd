import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { roleAllows, type Team } from '../../domains/applications/teams.js';
import { HearthError } from '../../kernel/errors.js';
import { field, type PortalContext, type Signed, SNOWFLAKE } from './context.js';
import type { FieldError } from './html.js';
import { renderNotFoundPage } from './pages.js';
import { renderTeamPage, renderTeamsPage, type TeamMemberRow } from './pages-settings.js';

type TeamRequest = FastifyRequest<{ Params: { team_id: string } }>;

/**
 * Teams: the user's teams, a new team (its creator its owner), and members with their roles. Every change
 * goes through the teams service with the user as the actor, so each role may do exactly what the service
 * lets it (an admin manages developers and read-only members; only the owner hands the team over).
 */
export function teamsSection(app: FastifyInstance, ctx: PortalContext): void {
  const { send, guard, attempt } = ctx;
  const { teams, accounts } = ctx.deps;

  const listPage = async (signed: Signed, extra: { errors?: FieldError[]; name?: string } = {}) => {
    const mine = await teams.teamsOf(signed.user.id);
    const summaries = mine.map((team) => ({
      id: team.id,
      name: team.name,
      role: team.members.find((m) => m.userId === signed.user.id)?.role ?? 'read-only',
    }));
    return (n: string) => renderTeamsPage({ nonce: n, user: signed.page, teams: summaries, ...extra });
  };

  const teamPage = async (
    team: Team,
    signed: Signed,
    extra: { errors?: FieldError[]; notice?: string } = {},
  ) => {
    const role = team.members.find((m) => m.userId === signed.user.id)?.role ?? 'read-only';
    const members: TeamMemberRow[] = [];
    for (const member of team.members) {
      const user = await accounts.getUser(member.userId);
      members.push({ userId: member.userId, name: user?.username ?? member.userId, role: member.role });
    }
    return (n: string) =>
      renderTeamPage({
        nonce: n,
        user: signed.page,
        team: { id: team.id, name: team.name },
        members,
        role,
        canManage: roleAllows(role, 'manageMembers'),
        isOwner: role === 'owner',
        ...extra,
      });
  };

  /** The team of the path, which the user must belong to; a stranger gets the same 404 as a missing team. */
  const teamOf = async (request: TeamRequest, reply: FastifyReply) => {
    const guarded = await guard(request, reply);
    if (!guarded) return undefined;
    const id = request.params.team_id;
    const team = SNOWFLAKE.test(id) ? await teams.get(id) : undefined;
    const member = team?.members.some((m) => m.userId === guarded.signed.user.id) ?? false;
    if (!team || !member) {
      await send(reply, 404, (n) => renderNotFoundPage(n, guarded.signed.page, 'team'));
      return undefined;
    }
    return { team, signed: guarded.signed };
  };

  app.get('/developers/teams', async (request, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded) return reply;
    return send(reply, 200, await listPage(guarded.signed));
  });

  app.post('/developers/teams', async (request, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded) return reply;
    const { signed } = guarded;
    const name = field(request.body, 'name');
    let id = '';
    const refused = await attempt(async () => {
      id = (await teams.create({ name, ownerId: signed.user.id })).id;
    });
    if (!refused) return reply.redirect(`/developers/teams/${id}`, 303);
    return send(
      reply,
      refused.status,
      await listPage(signed, { errors: refused.errors, ...(name === undefined ? {} : { name }) }),
    );
  });

  app.get('/developers/teams/:team_id', async (request: TeamRequest, reply) => {
    const found = await teamOf(request, reply);
    if (!found) return reply;
    const notice = field(request.query, 'saved') !== undefined ? { notice: 'Saved.' } : {};
    return send(reply, 200, await teamPage(found.team, found.signed, notice));
  });

  /** Runs one change of members; answers the team page with the service's refusal, or back to it. */
  const change =
    (run: (team: Team, actorId: string, body: unknown) => Promise<unknown>) =>
    async (request: TeamRequest, reply: FastifyReply) => {
      const found = await teamOf(request, reply);
      if (!found) return reply;
      const { team, signed } = found;
      const refused = await attempt(async () => {
        await run(team, signed.user.id, request.body);
      });
      if (!refused) return reply.redirect(`/developers/teams/${team.id}?saved=1`, 303);
      const current = (await teams.get(team.id)) ?? team;
      return send(reply, refused.status, await teamPage(current, signed, { errors: refused.errors }));
    };

  app.post(
    '/developers/teams/:team_id/members',
    change(async (team, actorId, body) => {
      const named = (field(body, 'user') ?? '').trim();
      const user = SNOWFLAKE.test(named)
        ? await accounts.getUser(named)
        : await accounts.findUserByUsername(named);
      if (!user) throw new HearthError('UnknownUser');
      await teams.addMember({ teamId: team.id, userId: user.id, role: field(body, 'role') ?? '', actorId });
    }),
  );

  app.post(
    '/developers/teams/:team_id/members/role',
    change((team, actorId, body) =>
      teams.setRole({
        teamId: team.id,
        userId: field(body, 'user_id') ?? '',
        role: field(body, 'role') ?? '',
        actorId,
      }),
    ),
  );

  app.post(
    '/developers/teams/:team_id/members/remove',
    change((team, actorId, body) =>
      teams.removeMember({ teamId: team.id, userId: field(body, 'user_id') ?? '', actorId }),
    ),
  );
}
