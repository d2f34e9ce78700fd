import { constants } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  isLaunchApplicationId,
  type LaunchRegistration,
  launchCommandsDir,
  parseLaunchCommand,
} from '@hearth/protocol';

/**
 * The launch commands games registered on this machine (seed, Library operations: RegisterLaunchCommand),
 * as the agent reads them: one file per application in the registry folder the SDK writes. A registration
 * is checked again here, every time: the file is the user's to edit and the executable may be gone.
 */

/** Whether and what the agent may launch: `hearth rpc --no-launch`, `--launch-allow <ids>`. */
export interface LaunchSettings {
  /** Launching at all; when false an accepted invite never starts a program. */
  enabled: boolean;
  /** Only these applications, when given; every registered one when absent. */
  allow?: readonly string[] | undefined;
  /** The registry folder; default: `HEARTH_LAUNCH_COMMANDS_DIR`, else the user's configuration folder. */
  dir?: string | undefined;
}

/** What may be run: the executable and its arguments, checked. */
export interface LaunchPlan {
  applicationId: string;
  argv: [string, ...string[]];
}

export type LaunchLookup = { ok: true; plan: LaunchPlan } | { ok: false; reason: string };

export function registryDir(settings: LaunchSettings): string {
  return settings.dir ?? launchCommandsDir({ env: process.env, platform: process.platform, home: homedir() });
}

/** The plan for this application, or why there is none: disabled, not allowed, unregistered, invalid. */
export async function lookUpLaunch(settings: LaunchSettings, applicationId: string): Promise<LaunchLookup> {
  if (!settings.enabled) return { ok: false, reason: 'launching is disabled' };
  if (!isLaunchApplicationId(applicationId)) return { ok: false, reason: 'not an application id' };
  if (settings.allow && !settings.allow.includes(applicationId))
    return { ok: false, reason: 'the application is not in the launch allow-list' };
  const registration = await readRegistration(registryDir(settings), applicationId);
  if (!registration) return { ok: false, reason: 'the application registered no launch command' };
  // The command is the truth: it is parsed again, with the rules RegisterLaunchCommand applied.
  const parsed = parseLaunchCommand(registration.command);
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  const [executable, ...args] = parsed.argv;
  if (executable === undefined) return { ok: false, reason: 'the command names no executable' };
  const problem = await executableProblem(executable);
  if (problem) return { ok: false, reason: problem };
  return { ok: true, plan: { applicationId, argv: [executable, ...args] } };
}

async function readRegistration(dir: string, applicationId: string): Promise<LaunchRegistration | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, `${applicationId}.json`), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const value = JSON.parse(text) as Partial<LaunchRegistration> | null;
    if (value?.application_id !== applicationId || typeof value.command !== 'string') return undefined;
    return { application_id: applicationId, command: value.command, argv: [] };
  } catch {
    return undefined;
  }
}

/** An existing regular file this user may execute; never a Windows batch file (cmd.exe is a shell). */
async function executableProblem(path: string): Promise<string | undefined> {
  if (process.platform === 'win32' && /\.(bat|cmd)$/i.test(path))
    return 'a batch file runs through cmd.exe, a shell: register the executable';
  try {
    if (!(await stat(path)).isFile()) return `${path} is not a file`;
    if (process.platform !== 'win32') await access(path, constants.X_OK);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EACCES'
      ? `${path} is not executable`
      : `${path} does not exist`;
  }
}
