import type { Command } from 'commander';
import type { createHearth } from './app.js';
import type { Config } from './config.js';
import type { Team } from './domains/applications/teams.js';

type Hearth = Awaited<ReturnType<typeof createHearth>>;
type Options = Record<string, string | boolean | undefined>;

/** What cli.ts lends these commands: its settings flags, its one-shot server, its printer. */
export interface CliTools {
  withSettings(command: Command, include: (key: keyof Config) => boolean): Command;
  withHearth(command: Command, work: (hearth: Hearth) => Promise<void>): Promise<void>;
  print(json: boolean, value: Record<string, string>): void;
  isStorage(key: keyof Config): boolean;
}

/**
 * `hearth teams create|list|show|add-member|set-role|remove-member|transfer-app`, `hearth quests enroll`
 * and `hearth activities map|unmap|mappings` (README: Commands). `--as USER` acts as that team member,
 * held to their role; without it the operator may do anything.
 */
export function applicationCommands(program: Command, tools: CliTools): void {
  teamCommands(program, tools);
  questCommands(program, tools);
  activityCommands(program, tools);
}

function activityCommands(program: Command, { withSettings, withHearth, print, isStorage }: CliTools): void {
  const activities = program.command('activities').description("an application's Activity URL mappings");
  const isProxy = (key: keyof Config) => isStorage(key) || key === 'allowLoopbackUrls';
  withSettings(
    activities.command('map').description('map a path prefix of the Activity to a target URL'),
    isProxy,
  )
    .requiredOption('--app <id>', 'application id')
    .requiredOption('--prefix <path>', 'path prefix, such as / or /api')
    .requiredOption('--target <url>', 'target, such as example.com/api (https) or a full URL')
    .option('--json', 'print JSON', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        const mapping = await hearth.services.activities.map(String(options['app']), {
          prefix: options['prefix'],
          target: options['target'],
        });
        print(options['json'] === true, { prefix: mapping.prefix, target: mapping.target });
      });
    });
  withSettings(activities.command('unmap').description('remove the mapping of a prefix'), isStorage)
    .requiredOption('--app <id>', 'application id')
    .requiredOption('--prefix <path>', 'path prefix')
    .option('--json', 'print JSON', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        await hearth.services.activities.unmap(String(options['app']), String(options['prefix']));
        print(options['json'] === true, { removed: String(options['prefix']) });
      });
    });
  withSettings(activities.command('mappings').description("list an application's URL mappings"), isStorage)
    .requiredOption('--app <id>', 'application id')
    .option('--json', 'print JSON, one mapping per line', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        for (const mapping of await hearth.services.activities.mappings(String(options['app']))) {
          process.stdout.write(
            options['json'] === true
              ? `${JSON.stringify(mapping)}\n`
              : `${mapping.prefix} -> ${mapping.target}\n`,
          );
        }
      });
    });
}

function teamCommands(program: Command, { withSettings, withHearth, isStorage }: CliTools): void {
  const teams = program.command('teams').description('developer teams and the roles of their members');
  const actor = (options: Options) => (typeof options['as'] === 'string' ? { actorId: options['as'] } : {});
  const show = async (hearth: Hearth, team: Team, json: boolean) => {
    if (json) {
      process.stdout.write(`${JSON.stringify(await hearth.services.teams.toTeamObject(team))}\n`);
      return;
    }
    process.stdout.write(`id: ${team.id}\nname: ${team.name}\nowner_user_id: ${team.ownerUserId}\n`);
    for (const member of team.members) process.stdout.write(`member: ${member.userId} ${member.role}\n`);
  };
  const asOption = '--as <user>';
  const asHelp = 'act as this member (held to their role); default: the operator';

  withSettings(teams.command('create').description('create a team owned by a user'), isStorage)
    .requiredOption('--owner <user>', 'the owner (a user id)')
    .requiredOption('--name <name>', 'team name')
    .option('--json', 'print JSON', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        const team = await hearth.services.teams.create({ name: options['name'], ownerId: options['owner'] });
        await show(hearth, team, options['json'] === true);
      });
    });

  withSettings(teams.command('list').description('list every team'), isStorage)
    .option('--json', 'print JSON, one team per line', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        for (const team of await hearth.services.teams.list()) {
          if (options['json'] === true)
            process.stdout.write(`${JSON.stringify(await hearth.services.teams.toTeamObject(team))}\n`);
          else
            process.stdout.write(
              `${team.id} ${team.name} owner=${team.ownerUserId} members=${team.members.length}\n`,
            );
        }
      });
    });

  withSettings(teams.command('show').description('show a team and its members'), isStorage)
    .requiredOption('--team <id>', 'team id')
    .option('--json', 'print JSON', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        await show(
          hearth,
          await hearth.services.teams.require(String(options['team'])),
          options['json'] === true,
        );
      });
    });

  withSettings(teams.command('add-member').description('add a user to a team with a role'), isStorage)
    .requiredOption('--team <id>', 'team id')
    .requiredOption('--user <id>', 'user id')
    .requiredOption('--role <role>', 'admin, developer or read-only')
    .option(asOption, asHelp)
    .option('--json', 'print JSON', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        const team = await hearth.services.teams.addMember({
          teamId: String(options['team']),
          userId: String(options['user']),
          role: String(options['role']),
          ...actor(options),
        });
        await show(hearth, team, options['json'] === true);
      });
    });

  withSettings(
    teams.command('set-role').description("change a member's role (owner: hand the team over)"),
    isStorage,
  )
    .requiredOption('--team <id>', 'team id')
    .requiredOption('--user <id>', 'user id')
    .requiredOption('--role <role>', 'owner, admin, developer or read-only')
    .option(asOption, asHelp)
    .option('--json', 'print JSON', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        const team = await hearth.services.teams.setRole({
          teamId: String(options['team']),
          userId: String(options['user']),
          role: String(options['role']),
          ...actor(options),
        });
        await show(hearth, team, options['json'] === true);
      });
    });

  withSettings(teams.command('remove-member').description('remove a member from a team'), isStorage)
    .requiredOption('--team <id>', 'team id')
    .requiredOption('--user <id>', 'user id')
    .option(asOption, asHelp)
    .option('--json', 'print JSON', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        const team = await hearth.services.teams.removeMember({
          teamId: String(options['team']),
          userId: String(options['user']),
          ...actor(options),
        });
        await show(hearth, team, options['json'] === true);
      });
    });

  withSettings(
    teams.command('transfer-app').description('move an application into a team, for good'),
    isStorage,
  )
    .requiredOption('--team <id>', 'team id')
    .requiredOption('--app <id>', 'application id')
    .option(asOption, asHelp)
    .option('--json', 'print JSON', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        const team = await hearth.services.teams.transferApplication({
          teamId: String(options['team']),
          applicationId: String(options['app']),
          ...actor(options),
        });
        const value = { application_id: String(options['app']), team_id: team.id };
        process.stdout.write(
          options['json'] === true
            ? `${JSON.stringify(value)}\n`
            : `application_id: ${value.application_id}\nteam_id: ${value.team_id}\n`,
        );
      });
    });
}

function questCommands(program: Command, { withSettings, withHearth, print, isStorage }: CliTools): void {
  const quests = program.command('quests').description('quests, which the platform runs');
  withSettings(
    quests.command('enroll').description('enroll a user in a quest (the app gets QUEST_USER_ENROLLMENT)'),
    isStorage,
  )
    .requiredOption('--app <id>', 'application id')
    .requiredOption('--user <id>', 'user id')
    .requiredOption('--quest <id>', 'quest id (a snowflake)')
    .option('--json', 'print JSON', false)
    .action(async (options: Options, command: Command) => {
      await withHearth(command, async (hearth) => {
        const enrollment = await hearth.services.quests.enroll({
          applicationId: String(options['app']),
          userId: String(options['user']),
          questId: String(options['quest']),
        });
        print(options['json'] === true, {
          application_id: String(options['app']),
          quest_id: enrollment.quest_id,
          user_id: enrollment.user_id,
          enrolled_at: enrollment.enrolled_at,
        });
      });
    });
}
