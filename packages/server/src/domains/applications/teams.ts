import {
  FormErrors,
  TEAM_PSEUDO_USER_FLAG,
  TeamMemberRoles,
  TeamMembershipStates,
  type TeamRole,
  TeamRoles,
} from '@hearth/protocol';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import type { Storage } from '../../storage/database.js';
import type { AccountsService } from '../accounts/service.js';
import { toUserObject } from '../accounts/service.js';
import * as store from './store.js';
import * as teamStore from './team-store.js';

export interface Team {
  id: string;
  name: string;
  ownerUserId: string;
  createdAt: number;
  members: TeamMember[];
}

export interface TeamMember {
  userId: string;
  role: TeamRole;
  membershipState: number;
}

/** What a member may do, each role holding what the roles below it hold (DOCS teams: Team Member Roles). */
export const TeamActions = {
  /** See the team and its applications (read-only and up). */
  view: 'read-only',
  /** Change an application's configuration, reset its bot token (developer and up). */
  configure: 'developer',
  /** Invite and remove members below admin, change their roles (admin and up). */
  manageMembers: 'admin',
  /** Destructive or irreversible: transfer an application to the team, hand over the team (owner). */
  destructive: 'owner',
} as const satisfies Record<string, TeamRole>;

export type TeamAction = keyof typeof TeamActions;

/** The roles ranked, owner highest. */
export function roleRank(role: TeamRole): number {
  return TeamRoles.length - TeamRoles.indexOf(role);
}

export function roleAllows(role: TeamRole | undefined, action: TeamAction): boolean {
  return role !== undefined && roleRank(role) >= roleRank(TeamActions[action]);
}

/** `read-only` (the seed's spelling) or `read_only` (the wire's) name the same role. */
export function teamRoleNamed(name: string): TeamRole | undefined {
  const normalized = name === TeamMemberRoles.ReadOnly ? 'read-only' : name;
  return (TeamRoles as readonly string[]).includes(normalized) ? (normalized as TeamRole) : undefined;
}

export interface TeamsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  accounts: AccountsService;
}

/**
 * Developer teams: who shares an application's configuration and with what role. The operator (CLI, no
 * actor) may do anything; a member acting (`actorId`) is held to their role.
 */
export class TeamsService {
  readonly #deps: TeamsDeps;

  constructor(deps: TeamsDeps) {
    this.#deps = deps;
  }

  async create(input: { name: unknown; ownerId: unknown }): Promise<Team> {
    const { storage, clock, snowflakes, accounts } = this.#deps;
    if (typeof input.name !== 'string' || input.name.trim().length < 1 || input.name.length > 100) {
      throw invalidForm('name', FormErrors.badLength(1, 100));
    }
    const ownerId = String(input.ownerId);
    if (!(await accounts.getUser(ownerId))) throw new HearthError('UnknownUser');
    const id = snowflakes.next();
    const now = clock.now();
    await storage.transaction(async (tx) => {
      await teamStore.insertTeam(tx, {
        id,
        name: input.name as string,
        owner_user_id: ownerId,
        created_at: now,
      });
      await teamStore.insertMember(tx, {
        team_id: id,
        user_id: ownerId,
        role: 'owner',
        membership_state: TeamMembershipStates.Accepted,
        created_at: now,
      });
    });
    return this.require(id);
  }

  async get(id: string): Promise<Team | undefined> {
    const db = this.#deps.storage.db;
    const row = await teamStore.findTeam(db, id);
    if (!row) return undefined;
    const members = await teamStore.listMembers(db, id);
    return {
      id: row.id,
      name: row.name,
      ownerUserId: row.owner_user_id,
      createdAt: Number(row.created_at),
      members: members.map((m) => ({
        userId: m.user_id,
        role: teamRoleNamed(m.role) ?? 'read-only',
        membershipState: m.membership_state,
      })),
    };
  }

  async require(id: string): Promise<Team> {
    const team = /^\d{1,20}$/.test(id) ? await this.get(id) : undefined;
    if (!team) throw invalidForm('team_id', FormErrors.unknownTeam());
    return team;
  }

  async list(): Promise<Team[]> {
    const rows = await teamStore.listTeams(this.#deps.storage.db);
    return Promise.all(rows.map((row) => this.require(row.id)));
  }

  /** The teams `userId` belongs to. */
  async teamsOf(userId: string): Promise<Team[]> {
    const rows = await teamStore.membershipsOf(this.#deps.storage.db, userId);
    return Promise.all(rows.map((row) => this.require(row.team_id)));
  }

  /** The role of `userId` in the team, or undefined for a non-member. */
  async roleOf(teamId: string, userId: string): Promise<TeamRole | undefined> {
    const row = await teamStore.findMember(this.#deps.storage.db, teamId, userId);
    return row ? teamRoleNamed(row.role) : undefined;
  }

  async addMember(input: { teamId: string; userId: string; role: string; actorId?: string }): Promise<Team> {
    const team = await this.require(input.teamId);
    const role = this.#assignableRole(input.role);
    await this.#authorize(team, input.actorId, 'manageMembers', role);
    if (!(await this.#deps.accounts.getUser(input.userId))) throw new HearthError('UnknownUser');
    if (team.members.some((m) => m.userId === input.userId))
      throw invalidForm('user_id', FormErrors.invalid());
    await teamStore.insertMember(this.#deps.storage.db, {
      team_id: team.id,
      user_id: input.userId,
      role,
      membership_state: TeamMembershipStates.Accepted,
      created_at: this.#deps.clock.now(),
    });
    return this.require(team.id);
  }

  /** A new role; `owner` hands the team over (owner only), the former owner staying as an admin. */
  async setRole(input: { teamId: string; userId: string; role: string; actorId?: string }): Promise<Team> {
    const team = await this.require(input.teamId);
    const role = teamRoleNamed(input.role);
    if (!role) throw invalidForm('role', FormErrors.choices(TeamRoles));
    const member = this.#member(team, input.userId);
    if (role === 'owner') {
      await this.#authorize(team, input.actorId, 'destructive');
      await this.#deps.storage.transaction(async (tx) => {
        await teamStore.setMemberRole(tx, team.id, team.ownerUserId, 'admin');
        await teamStore.setMemberRole(tx, team.id, member.userId, 'owner');
        await teamStore.setTeamOwner(tx, team.id, member.userId);
      });
      return this.require(team.id);
    }
    if (member.role === 'owner') throw invalidForm('user_id', FormErrors.invalid());
    await this.#authorize(team, input.actorId, 'manageMembers', role, member.role);
    await teamStore.setMemberRole(this.#deps.storage.db, team.id, member.userId, role);
    return this.require(team.id);
  }

  async removeMember(input: { teamId: string; userId: string; actorId?: string }): Promise<Team> {
    const team = await this.require(input.teamId);
    const member = this.#member(team, input.userId);
    // The owner leaves only by handing the team over first.
    if (member.role === 'owner') throw invalidForm('user_id', FormErrors.invalid());
    await this.#authorize(team, input.actorId, 'manageMembers', member.role);
    await teamStore.deleteMember(this.#deps.storage.db, team.id, member.userId);
    return this.require(team.id);
  }

  /**
   * Moves an application into the team, for good (DOCS teams: "cannot be transferred back"). A member acting
   * must own both the team and the application.
   */
  async transferApplication(input: {
    teamId: string;
    applicationId: string;
    actorId?: string;
  }): Promise<Team> {
    const team = await this.require(input.teamId);
    const db = this.#deps.storage.db;
    const application = await store.findApplicationById(db, input.applicationId);
    if (!application) throw new HearthError('UnknownApplication');
    if (application.team_id !== null) throw invalidForm('application_id', FormErrors.invalid());
    await this.#authorize(team, input.actorId, 'destructive');
    if (input.actorId !== undefined && application.owner_id !== input.actorId)
      throw new HearthError('MissingPermissions');
    await store.updateApplication(db, application.id, { team_id: team.id });
    return team;
  }

  /** The team object (DOCS teams: Team Object); the owner's role is not on the wire, so it shows `admin`. */
  async toTeamObject(team: Team) {
    const members = [];
    for (const member of team.members) {
      const user = await this.#deps.accounts.getUser(member.userId);
      if (!user) continue;
      members.push({
        user: toUserObject(user),
        team_id: team.id,
        membership_state: member.membershipState,
        role: wireRole(member.role),
        permissions: ['*'],
      });
    }
    return { id: team.id, icon: null, name: team.name, owner_user_id: team.ownerUserId, members };
  }

  #member(team: Team, userId: string): TeamMember {
    const member = team.members.find((m) => m.userId === userId);
    if (!member) throw invalidForm('user_id', FormErrors.notTeamMember());
    return member;
  }

  #assignableRole(name: string): Exclude<TeamRole, 'owner'> {
    const role = teamRoleNamed(name);
    const choices = TeamRoles.filter((r) => r !== 'owner');
    if (!role || role === 'owner') throw invalidForm('role', FormErrors.choices(choices));
    return role;
  }

  /**
   * The operator may do anything; a member needs the action's role, and below the owner may only give or
   * take roles beneath their own (an admin manages developers and read-only members).
   */
  async #authorize(team: Team, actorId: string | undefined, action: TeamAction, ...roles: TeamRole[]) {
    if (actorId === undefined) return;
    const actor = team.members.find((m) => m.userId === actorId)?.role;
    if (!roleAllows(actor, action)) throw new HearthError('MissingPermissions');
    if (actor !== 'owner' && roles.some((role) => roleRank(role) >= roleRank(actor!)))
      throw new HearthError('MissingPermissions');
  }
}

/** A member's role on the wire: the owner, whom `owner_user_id` names, shows as an admin. */
export function wireRole(role: TeamRole): string {
  if (role === 'owner' || role === 'admin') return TeamMemberRoles.Admin;
  return role === 'developer' ? TeamMemberRoles.Developer : TeamMemberRoles.ReadOnly;
}

/** The pseudo-user that stands for a team as its applications' `owner` (DOCS application: owner). */
export function teamPseudoUser(team: Team) {
  return {
    id: team.id,
    username: `team${team.id}`,
    discriminator: '0',
    global_name: null,
    avatar: null,
    public_flags: TEAM_PSEUDO_USER_FLAG,
    flags: TEAM_PSEUDO_USER_FLAG,
    banner: null,
    accent_color: null,
    avatar_decoration_data: null,
    collectibles: null,
    primary_guild: null,
  };
}
