import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { TeamMembersTable, TeamsTable } from '../../storage/schema.js';

export type TeamRow = Selectable<TeamsTable>;
export type TeamMemberRow = Selectable<TeamMembersTable>;

export async function insertTeam(db: Executor, row: Insertable<TeamsTable>): Promise<void> {
  await db.insertInto('teams').values(row).execute();
}

export function findTeam(db: Executor, id: string): Promise<TeamRow | undefined> {
  return db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listTeams(db: Executor): Promise<TeamRow[]> {
  return db.selectFrom('teams').selectAll().orderBy('id').execute();
}

export async function setTeamOwner(db: Executor, id: string, ownerId: string): Promise<void> {
  await db.updateTable('teams').set({ owner_user_id: ownerId }).where('id', '=', id).execute();
}

/** Members oldest first: the owner, who joined with the team, leads. */
export function listMembers(db: Executor, teamId: string): Promise<TeamMemberRow[]> {
  return db
    .selectFrom('team_members')
    .selectAll()
    .where('team_id', '=', teamId)
    .orderBy('created_at')
    .orderBy('user_id')
    .execute();
}

export function findMember(db: Executor, teamId: string, userId: string): Promise<TeamMemberRow | undefined> {
  return db
    .selectFrom('team_members')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function insertMember(db: Executor, row: Insertable<TeamMembersTable>): Promise<void> {
  await db.insertInto('team_members').values(row).execute();
}

export async function setMemberRole(
  db: Executor,
  teamId: string,
  userId: string,
  role: string,
): Promise<void> {
  await db
    .updateTable('team_members')
    .set({ role })
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .execute();
}

export async function deleteMember(db: Executor, teamId: string, userId: string): Promise<void> {
  await db.deleteFrom('team_members').where('team_id', '=', teamId).where('user_id', '=', userId).execute();
}

/** The teams a user belongs to, with their role in each. */
export function membershipsOf(db: Executor, userId: string): Promise<TeamMemberRow[]> {
  return db.selectFrom('team_members').selectAll().where('user_id', '=', userId).execute();
}
