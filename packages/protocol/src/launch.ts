/**
 * Launch commands (seed, Library operations: RegisterLaunchCommand): how a game registers, on the player's
 * machine, the command the platform client runs when the player accepts an invite to it while it is not
 * running. The SDK writes the registration, the local agent (`hearth rpc`) reads it; both parse it here.
 */

/** Hearth's limits: the spec gives no number. */
export const LaunchCommandLimits = {
  /** Characters of the command as registered, executable and arguments together. */
  commandMaxLength: 1024,
  /** Arguments after the executable. */
  argumentsMax: 64,
} as const;

/** Environment variables of the launch, read by the launched game (its SDK) and by both sides. */
export const LaunchEnvironment = {
  /** The join secret of the accepted invite: the game joins that party once it is Ready. */
  joinSecret: 'HEARTH_ACTIVITY_JOIN_SECRET',
  /** The application whose invite was accepted. */
  applicationId: 'HEARTH_APPLICATION_ID',
  /** Where registrations live, when not in the default folder of the platform. */
  registryDir: 'HEARTH_LAUNCH_COMMANDS_DIR',
} as const;

/** A registration as stored: one file `<application_id>.json` in the registry folder. */
export interface LaunchRegistration {
  application_id: string;
  /** The command as the game gave it. */
  command: string;
  /** The command split into the executable and its arguments: what is run, never through a shell. */
  argv: string[];
}

export type LaunchCommandParse = { ok: true; argv: string[] } | { ok: false; reason: string };

/**
 * Splits a command into an argv without a shell: whitespace separates words; "double" and 'single'
 * quotes group (inside double quotes `\"` is a quote); nothing else is special: no variables, globs,
 * `;`, pipes or redirections. Backslashes stay as they are, so Windows paths need no escaping.
 */
export function parseLaunchCommand(command: string): LaunchCommandParse {
  if (command.length === 0) return { ok: false, reason: 'the command is empty' };
  if (command.length > LaunchCommandLimits.commandMaxLength)
    return { ok: false, reason: `the command is longer than ${LaunchCommandLimits.commandMaxLength}` };
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused here.
  if (/[\u0000-\u001f\u007f]/.test(command.replace(/[\t ]/g, '')))
    return { ok: false, reason: 'the command holds a control character' };
  const argv: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < command.length; i++) {
    const char = command[i] as string;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
    } else if (quote === '"') {
      if (char === '\\' && command[i + 1] === '"') {
        word += '"';
        i++;
      } else if (char === '"') quote = undefined;
      else word += char;
    } else if (char === ' ' || char === '\t') {
      if (inWord) argv.push(word);
      word = '';
      inWord = false;
    } else {
      inWord = true;
      if (char === '"' || char === "'") quote = char;
      else word += char;
    }
  }
  if (quote) return { ok: false, reason: 'the command has an unterminated quote' };
  if (inWord) argv.push(word);
  const executable = argv[0];
  if (executable === undefined || executable === '')
    return { ok: false, reason: 'the command names no executable' };
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(executable))
    return { ok: false, reason: 'a custom protocol cannot be launched: register the executable' };
  if (!isAbsoluteExecutablePath(executable))
    return { ok: false, reason: 'the executable must be an absolute path' };
  if (argv.length - 1 > LaunchCommandLimits.argumentsMax)
    return { ok: false, reason: `the command has more than ${LaunchCommandLimits.argumentsMax} arguments` };
  return { ok: true, argv };
}

/** `/usr/bin/game`, `C:\Games\game.exe` or `\\server\share\game.exe`; no `..` segment. */
export function isAbsoluteExecutablePath(path: string): boolean {
  const absolute = path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || /^\\\\[^\\]/.test(path);
  return absolute && !path.split(/[\\/]/).includes('..');
}

/** An application id as a registry file name: a snowflake, nothing that could leave the folder. */
export function isLaunchApplicationId(id: string): boolean {
  return /^\d{1,20}$/.test(id);
}

/**
 * The registry folder of this user of the machine: `HEARTH_LAUNCH_COMMANDS_DIR`, else the platform's
 * per-user configuration folder. Pure: the caller passes its environment, platform and home.
 */
export function launchCommandsDir(context: {
  env: Readonly<Record<string, string | undefined>>;
  platform: string;
  home: string;
}): string {
  const { env, platform, home } = context;
  const chosen = env[LaunchEnvironment.registryDir];
  if (chosen) return chosen;
  if (platform === 'win32')
    return `${env['APPDATA'] || `${home}\\AppData\\Roaming`}\\Hearth\\launch-commands`;
  if (platform === 'darwin') return `${home}/Library/Application Support/Hearth/launch-commands`;
  return `${env['XDG_CONFIG_HOME'] || `${home}/.config`}/hearth/launch-commands`;
}
