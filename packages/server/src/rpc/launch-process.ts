import { spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { LaunchEnvironment } from '@hearth/protocol';
import type { LaunchPlan } from './launch-commands.js';

/**
 * The agent's environment without its own settings: `HEARTH_RPC_TOKEN` is the player's session token, which
 * a game must never hold (it gets OAuth2 tokens of its own). The registry folder stays, for its SDK.
 */
function gameEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(
      ([key]) => !key.startsWith('HEARTH_') || key === LaunchEnvironment.registryDir,
    ),
  );
}

export type LaunchResult = { ok: true; pid: number } | { ok: false; reason: string };

/**
 * Starts the game for an accepted invite: the executable with its registered arguments as an argv, never
 * through a shell (nothing in the command or the secret is interpreted), detached from the agent, in its
 * own folder. The join secret and the application travel in the environment (`HEARTH_ACTIVITY_JOIN_SECRET`,
 * `HEARTH_APPLICATION_ID`), where the game's SDK reads them: not in argv, which other users can list.
 */
export function launchGame(plan: LaunchPlan, joinSecret: string): Promise<LaunchResult> {
  const [executable, ...args] = plan.argv;
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(executable, args, {
        shell: false,
        detached: true,
        stdio: 'ignore',
        cwd: dirname(executable),
        windowsHide: false,
        env: {
          ...gameEnvironment(process.env),
          [LaunchEnvironment.joinSecret]: joinSecret,
          [LaunchEnvironment.applicationId]: plan.applicationId,
        },
      });
    } catch (error) {
      resolve({ ok: false, reason: (error as Error).message });
      return;
    }
    child.once('error', (error) => resolve({ ok: false, reason: error.message }));
    child.once('spawn', () => {
      child.unref();
      resolve({ ok: true, pid: child.pid ?? 0 });
    });
  });
}
