import { readFile } from 'node:fs/promises';
import { type Command, Option } from 'commander';
import { parse as parseYaml } from 'yaml';
import type { Hearth } from '../app.js';

/** What `hearth seed` borrows from the CLI: its storage flags and a one-shot Hearth on that database. */
export interface SeedCommandHelpers {
  withStorageSettings(command: Command): Command;
  withHearth(
    command: Command,
    work: (hearth: Hearth) => Promise<void>,
    config?: { emulator: boolean },
  ): Promise<void>;
}

/** A refusal of an `hearth emulator` command (the server's answer, or a bad option), told in one line. */
export class EmulatorCommandError extends Error {}

/**
 * `hearth seed --file` (on a database) and `hearth emulator clock|seed|snapshot|fault|act` (on a running
 * server in emulator mode, through its admin API) — README "Emulator mode".
 */
export function addEmulatorCommands(program: Command, helpers: SeedCommandHelpers): void {
  helpers
    .withStorageSettings(
      program
        .command('seed')
        .description('create the objects of a fixture file (YAML or JSON), once; print their ids and tokens'),
    )
    .requiredOption('--file <path>', 'the fixture document')
    .action(async (options: { file: string }, command: Command) => {
      const document = await readFixture(options.file);
      await helpers.withHearth(
        command,
        async (hearth) => {
          const result = await hearth.emulator?.seed(document);
          process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
        },
        { emulator: true },
      );
    });

  const emulator = program
    .command('emulator')
    .description('drive a running server in emulator mode (--emulator) through its admin API');
  const remote = (command: Command) =>
    command
      .addOption(
        new Option('--server <url>', 'the server').env('HEARTH_SERVER').default('http://127.0.0.1:8080'),
      )
      .addOption(
        new Option('--admin-token <token>', 'its --admin-token')
          .env('HEARTH_ADMIN_TOKEN')
          .makeOptionMandatory(),
      );

  remote(emulator.command('clock').description('read the test clock, or move it'))
    .option('--advance <duration>', 'move forward by a duration: 30d, 15m, 1h30m')
    .option('--to <instant>', 'move to an ISO-8601 instant')
    .option('--freeze', 'stop the clock there')
    .option('--unfreeze', 'let it run at real speed again')
    .action(async (options: Record<string, string | boolean | undefined>) => {
      const change = {
        ...(typeof options['advance'] === 'string' ? { advance: options['advance'] } : {}),
        ...(typeof options['to'] === 'string' ? { to: options['to'] } : {}),
        ...(options['freeze'] ? { freeze: true } : options['unfreeze'] ? { freeze: false } : {}),
      };
      const moving = Object.keys(change).length > 0;
      await call(options, moving ? 'POST' : 'GET', '/clock', moving ? change : undefined);
    });

  remote(emulator.command('seed').description('seed a fixture file on the running server'))
    .requiredOption('--file <path>', 'the fixture document (YAML or JSON)')
    .action(async (options: Record<string, string>) => {
      await call(options, 'POST', '/seed', await readFixture(String(options['file'])));
    });

  const snapshot = emulator.command('snapshot').description('save, restore, list or delete snapshots');
  for (const [name, method, suffix, description] of [
    ['save', 'PUT', '', 'save the whole state under a name'],
    ['restore', 'POST', '/restore', 'replace the live state with a snapshot'],
    ['delete', 'DELETE', '', 'delete a snapshot'],
  ] as const) {
    remote(snapshot.command(name).description(description).argument('<name>')).action(
      async (snapshotName: string, options: Record<string, string>) => {
        await call(options, method, `/snapshots/${encodeURIComponent(snapshotName)}${suffix}`);
      },
    );
  }
  remote(snapshot.command('list').description('list snapshots')).action(
    async (options: Record<string, string>) => {
      await call(options, 'GET', '/snapshots');
    },
  );

  const fault = emulator.command('fault').description('add, list or clear fault rules');
  remote(
    fault
      .command('add')
      .description('add a rule, given as JSON (README "Fault injection")')
      .argument('<json>'),
  ).action(async (json: string, options: Record<string, string>) => {
    await call(options, 'POST', '/faults', parseJson(json));
  });
  remote(fault.command('list').description('list the rules')).action(
    async (options: Record<string, string>) => {
      await call(options, 'GET', '/faults');
    },
  );
  remote(fault.command('clear').description('remove one rule, or every rule').argument('[id]')).action(
    async (id: string | undefined, options: Record<string, string>) => {
      await call(options, 'DELETE', id === undefined ? '/faults' : `/faults/${encodeURIComponent(id)}`);
    },
  );

  remote(emulator.command('act').description('act as a user: <action> <json body>, or list the actions'))
    .argument('[action]')
    .argument('[json]')
    .action(async (action: string | undefined, json: string | undefined, options: Record<string, string>) => {
      if (action === undefined) await call(options, 'GET', '/act');
      else await call(options, 'POST', `/act/${encodeURIComponent(action)}`, parseJson(json ?? '{}'));
    });
}

/** One admin call; prints the answer as JSON, or fails with the server's answer. */
async function call(
  options: Record<string, unknown>,
  method: string,
  path: string,
  body?: unknown,
): Promise<void> {
  const server = String(options['server']).replace(/\/+$/, '');
  let response: Response;
  try {
    response = await fetch(`${server}/_hearth${path}`, {
      method,
      headers: {
        authorization: `Admin ${String(options['adminToken'])}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new EmulatorCommandError(`cannot reach ${server}: ${(error as Error).message}`);
  }
  const text = await response.text();
  if (!response.ok) {
    const hint =
      response.status === 404 && path !== '/faults' ? ' (is the server running with --emulator?)' : '';
    throw new EmulatorCommandError(`${method} /_hearth${path}: ${response.status} ${text}${hint}`);
  }
  if (text !== '') process.stdout.write(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
}

async function readFixture(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new EmulatorCommandError(`--file: cannot read ${path} (${(error as Error).message})`);
  }
  try {
    // YAML is a superset of JSON: one parser reads both.
    return parseYaml(text) as unknown;
  } catch (error) {
    throw new EmulatorCommandError(`--file: ${path} is not YAML or JSON (${(error as Error).message})`);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new EmulatorCommandError(`not JSON: ${text}`);
  }
}
