import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../packages/server/bin/hearth.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const LISTENING = /hearth listening on (http:\/\/127\.0\.0\.1:\d+)\n/;

/** A `hearth` child process with everything it printed so far, and ways to wait for more. */
export class HearthProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #watchers = new Set<() => void>();

  constructor(args: string[], env: Record<string, string>) {
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !key.startsWith('HEARTH_')),
    );
    this.child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...inherited, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.#append('stdout', chunk));
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => this.#append('stderr', chunk));
    this.exited = new Promise((resolve, reject) => {
      this.child.once('error', reject);
      this.child.once('close', (code, signal) => {
        for (const watcher of this.#watchers) watcher();
        resolve({ code, signal });
      });
    });
  }

  /** Resolves once the output satisfies `test`; rejects if the process ends first. */
  until(test: (process: HearthProcess) => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (test(this)) {
          this.#watchers.delete(check);
          resolve();
        } else if (this.child.exitCode !== null || this.child.signalCode !== null) {
          this.#watchers.delete(check);
          reject(new Error(`hearth ended first:\n${this.stdout}\n---\n${this.stderr}`));
        }
      };
      this.#watchers.add(check);
      check();
    });
  }

  #append(stream: 'stdout' | 'stderr', chunk: string): void {
    this[stream] += chunk;
    for (const watcher of this.#watchers) watcher();
  }
}

/** Runs a one-shot command; answers its stdout, or throws with its stderr. */
export async function hearthCommand(args: string[], env: Record<string, string>): Promise<string> {
  const running = new HearthProcess(args, env);
  const { code } = await running.exited;
  if (code !== 0) throw new Error(`hearth ${args.join(' ')} exited ${code}: ${running.stderr}`);
  return running.stdout;
}

/** `hearth serve --port 0 …` once it listens; answers the process and its address. */
export async function hearthServe(
  args: string[],
  env: Record<string, string>,
): Promise<{ server: HearthProcess; url: string }> {
  const server = new HearthProcess(['serve', '--port', '0', ...args], env);
  await server.until((p) => LISTENING.test(p.stdout));
  return { server, url: LISTENING.exec(server.stdout)![1]! };
}
