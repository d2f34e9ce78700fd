import { accessSync, constants, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  isLaunchApplicationId,
  LaunchEnvironment,
  type LaunchRegistration,
  launchCommandsDir,
} from '@hearth/protocol';
import type { LaunchCommandStore, LaunchJoin } from './launch-commands.js';

/**
 * The registry on this machine: one file per application in the agent's folder, written whole (a
 * temporary file renamed over it) so the agent never reads half a registration.
 */
export function nodeLaunchCommandStore(dir?: string): LaunchCommandStore {
  const folder = dir ?? launchCommandsDir({ env: process.env, platform: process.platform, home: homedir() });
  return {
    register(registration: LaunchRegistration): string | undefined {
      if (!isLaunchApplicationId(registration.application_id)) return 'the application id is not a snowflake';
      const problem = executableProblem(registration.argv[0] ?? '');
      if (problem) return problem;
      try {
        mkdirSync(folder, { recursive: true, mode: 0o700 });
        const target = join(folder, `${registration.application_id}.json`);
        const temporary = `${target}.${process.pid}.tmp`;
        writeFileSync(temporary, `${JSON.stringify(registration)}\n`, { mode: 0o600 });
        renameSync(temporary, target);
        return undefined;
      } catch (error) {
        return `the registration could not be written: ${(error as Error).message}`;
      }
    },
  };
}

/** The executable must exist as a file this user may run. */
export function executableProblem(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return `${path} is not a file`;
    if (process.platform !== 'win32') accessSync(path, constants.X_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'EACCES' ? `${path} is not executable` : `${path} does not exist`;
  }
}

/** The join this process was launched for by the agent, read from its environment once. */
export function launchJoinFromEnvironment(env: NodeJS.ProcessEnv = process.env): LaunchJoin | undefined {
  const secret = env[LaunchEnvironment.joinSecret];
  const applicationId = env[LaunchEnvironment.applicationId];
  if (!secret || !applicationId || !isLaunchApplicationId(applicationId)) return undefined;
  return { applicationId, secret };
}
