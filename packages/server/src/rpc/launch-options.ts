import { LaunchEnvironment } from '@hearth/protocol';
import { type Command, Option } from 'commander';
import type { LaunchSettings } from './launch-commands.js';

/**
 * The agent's launch options (README: Local RPC): `--no-launch` turns launching off, `--launch-allow <id>`
 * (repeatable) limits it to those applications, `--launch-commands-dir` moves the registry the SDK writes.
 */
export function withLaunchOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--no-launch', 'never launch a game for an accepted invite').env('HEARTH_RPC_NO_LAUNCH'),
    )
    .addOption(
      new Option('--launch-allow <application-id>', 'launch only these applications (repeatable)')
        .env('HEARTH_RPC_LAUNCH_ALLOW')
        .argParser((value: string, previous: string[] | undefined) => [
          ...(previous ?? []),
          ...value.split(',').map((id) => id.trim()),
        ]),
    )
    .addOption(
      new Option('--launch-commands-dir <dir>', 'the launch-command registry games write to').env(
        LaunchEnvironment.registryDir,
      ),
    );
}

/** The settings of those options; an allow-list entry that is not an application id is refused. */
export function launchSettingsOf(options: Record<string, unknown>): LaunchSettings {
  const allow = options['launchAllow'];
  const dir = options['launchCommandsDir'];
  if (Array.isArray(allow)) {
    const bad = allow.find((id) => typeof id !== 'string' || !/^\d{1,20}$/.test(id));
    if (bad !== undefined)
      throw new LaunchOptionError(`--launch-allow takes application ids, not ${String(bad)}`);
  }
  return {
    enabled: options['launch'] !== false,
    ...(Array.isArray(allow) ? { allow: allow as string[] } : {}),
    ...(typeof dir === 'string' && dir !== '' ? { dir } : {}),
  };
}

/** A refusal of the launch options, told in one line. */
export class LaunchOptionError extends Error {}
