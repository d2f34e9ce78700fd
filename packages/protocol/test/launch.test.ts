import { describe, expect, it } from 'vitest';
import {
  isAbsoluteExecutablePath,
  LaunchCommandLimits,
  launchCommandsDir,
  parseLaunchCommand,
} from '../src/index.js';

/**
 * The launch command as the SDK and the agent both read it (seed, Library operations: RegisterLaunchCommand):
 * words split as a shell splits them, with nothing a shell would interpret.
 */
describe('parseLaunchCommand', () => {
  const argv = (command: string) => {
    const parsed = parseLaunchCommand(command);
    if (!parsed.ok) throw new Error(parsed.reason);
    return parsed.argv;
  };

  it('splits on spaces and tabs; quotes group; only \\" is an escape, inside double quotes', () => {
    expect(argv('/opt/game/bin/game  --full-screen\t--no-hax')).toEqual([
      '/opt/game/bin/game',
      '--full-screen',
      '--no-hax',
    ]);
    expect(argv(`"/opt/My Game/game" --name 'Player "One"' "say \\"hi\\"" "" pre"fix"ed`)).toEqual([
      '/opt/My Game/game',
      '--name',
      'Player "One"',
      'say "hi"',
      '',
      'prefixed',
    ]);
    expect(argv('C:\\Games\\Quest\\quest.exe --lang=de')).toEqual([
      'C:\\Games\\Quest\\quest.exe',
      '--lang=de',
    ]);
  });

  it('keeps what a shell would interpret as plain text', () => {
    expect(argv('/bin/game ; rm -rf ~ && $(id) `id` | cat > /tmp/x $HOME *')).toEqual([
      '/bin/game',
      ';',
      'rm',
      '-rf',
      '~',
      '&&',
      '$(id)',
      '`id`',
      '|',
      'cat',
      '>',
      '/tmp/x',
      '$HOME',
      '*',
    ]);
  });

  it('refuses what cannot be run as an absolute executable, with the reason', () => {
    const reason = (command: string) => {
      const parsed = parseLaunchCommand(command);
      return parsed.ok ? 'accepted' : parsed.reason;
    };
    expect(reason('')).toBe('the command is empty');
    expect(reason('""')).toBe('the command names no executable');
    expect(reason('game.exe')).toBe('the executable must be an absolute path');
    expect(reason('/opt/../bin/sh')).toBe('the executable must be an absolute path');
    expect(reason('steam://rungameid/10')).toBe(
      'a custom protocol cannot be launched: register the executable',
    );
    expect(reason("/bin/game 'open")).toBe('the command has an unterminated quote');
    expect(reason('/bin/game\u0000x')).toBe('the command holds a control character');
    expect(reason('/bin/game\r\n/bin/other')).toBe('the command holds a control character');
    expect(reason(`/bin/${'g'.repeat(LaunchCommandLimits.commandMaxLength)}`)).toBe(
      `the command is longer than ${LaunchCommandLimits.commandMaxLength}`,
    );
    expect(isAbsoluteExecutablePath('\\\\server\\share\\game.exe')).toBe(true);
    expect(isAbsoluteExecutablePath('C:game.exe')).toBe(false);
  });
});

describe('launchCommandsDir', () => {
  it('the environment variable first, else the per-user configuration folder of each platform', () => {
    const home = '/home/p';
    expect(launchCommandsDir({ env: { HEARTH_LAUNCH_COMMANDS_DIR: '/r' }, platform: 'linux', home })).toBe(
      '/r',
    );
    expect(launchCommandsDir({ env: {}, platform: 'linux', home })).toBe(
      '/home/p/.config/hearth/launch-commands',
    );
    expect(launchCommandsDir({ env: { XDG_CONFIG_HOME: '/x' }, platform: 'linux', home })).toBe(
      '/x/hearth/launch-commands',
    );
    expect(launchCommandsDir({ env: {}, platform: 'darwin', home: '/Users/p' })).toBe(
      '/Users/p/Library/Application Support/Hearth/launch-commands',
    );
    expect(
      launchCommandsDir({ env: { APPDATA: 'C:\\Users\\p\\AppData\\Roaming' }, platform: 'win32', home }),
    ).toBe('C:\\Users\\p\\AppData\\Roaming\\Hearth\\launch-commands');
  });
});
