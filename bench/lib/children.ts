import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { type IpcRequest, isIpcReply } from './ipc.js';

/** Every child still running, so that no exit path (error, timeout, Ctrl-C) leaves a server behind. */
const live = new Set<ChildProcess>();
process.on('exit', killAllChildren);

/** Kills every child this process started and has not reaped yet; synchronous, so safe in an exit handler. */
export function killAllChildren(): void {
  for (const child of live) child.kill('SIGKILL');
}

export interface Command {
  /** Names the child in errors and progress lines. */
  name: string;
  args: string[];
  cwd: string;
  /** Added to the parent's environment, from which every HEARTH_* variable is removed first. */
  env?: Record<string, string>;
  timeoutMs: number;
  /** Node flags before the script, e.g. `--expose-gc`. */
  nodeFlags?: string[];
  /** Opens an IPC channel to the child, for `ServerProcess.request` (the child answers with `lib/ipc.ts`). */
  ipc?: boolean;
}

export interface ServerCommand extends Command {
  /** A stdout line announcing readiness; its first group is the base URL. */
  ready: RegExp;
}

export interface ServerProcess {
  readonly name: string;
  readonly url: string;
  /** CPU seconds (user + system) the process has used so far, from /proc; undefined where there is none. */
  cpuSeconds(): number | undefined;
  /** Throws, with the end of its stderr, if the server has exited. */
  assertAlive(): void;
  /** SIGTERM, then SIGKILL after `graceMs` (default 5 s); resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /**
   * Started with `ipc`: sends `request` over the IPC channel and answers the child's reply (`lib/ipc.ts`);
   * rejects with the child's error, if it exits first, or after `timeoutMs`.
   */
  request(request: IpcRequest, timeoutMs?: number): Promise<unknown>;
}

/** Runs `node <args>` to completion and returns its stdout; throws on a non-zero exit or timeout. */
export async function runNode(command: Command): Promise<string> {
  const child = start(command);
  const stdout: string[] = [];
  child.process.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk.toString('utf8')));
  const timer = setTimeout(() => child.process.kill('SIGKILL'), command.timeoutMs);
  try {
    const { code, signal } = await child.exited;
    if (code !== 0) throw new Error(`${command.name} exited with ${code ?? signal}\n${child.stderrTail()}`);
    return stdout.join('');
  } finally {
    clearTimeout(timer);
  }
}

/** Starts `node <args>` and waits for the line that gives its URL. */
export async function startServer(command: ServerCommand): Promise<ServerProcess> {
  const child = start(command);
  let exit: string | undefined;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  child.process.on('message', (message: unknown) => {
    if (!isIpcReply(message)) return;
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if ('error' in message) waiter.reject(new Error(`${command.name}: ${message.error}`));
    else waiter.resolve(message.result);
  });
  void child.exited.then(({ code, signal }) => {
    exit = `exited with ${code ?? signal}`;
    for (const waiter of pending.values()) {
      waiter.reject(new Error(`${command.name} ${exit}\n${child.stderrTail()}`));
    }
    pending.clear();
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.process.kill('SIGKILL');
      reject(new Error(`${command.name} not ready after ${command.timeoutMs} ms\n${child.stderrTail()}`));
    }, command.timeoutMs);
    // Reading goes on after readiness so that the pipe never fills and blocks the server.
    createInterface({ input: child.process.stdout! }).on('line', (line) => {
      const found = command.ready.exec(line)?.[1];
      if (found === undefined) return;
      clearTimeout(timer);
      resolve(found);
    });
    void child.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${command.name} exited with ${code ?? signal} before ready\n${child.stderrTail()}`));
    });
  });
  return {
    name: command.name,
    url,
    cpuSeconds: () => cpuSecondsOf(child.process.pid),
    assertAlive() {
      if (exit !== undefined) throw new Error(`${command.name} ${exit}\n${child.stderrTail()}`);
    },
    async stop(graceMs = 5000) {
      if (!live.has(child.process)) return;
      child.process.kill('SIGTERM');
      const timer = setTimeout(() => child.process.kill('SIGKILL'), graceMs);
      await child.exited;
      clearTimeout(timer);
    },
    request(request, timeoutMs = 30_000) {
      if (exit !== undefined) return Promise.reject(new Error(`${command.name} ${exit}`));
      if (!command.ipc) return Promise.reject(new Error(`${command.name} was started without ipc`));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${command.name} did not answer ${request.cmd} within ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, {
          resolve: (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
        child.process.send({ ...request, id });
      });
    },
  };
}

interface Started {
  process: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderrTail(): string;
}

function start(command: Command): Started {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('HEARTH_')) env[key] = value;
  Object.assign(env, command.env);
  const child = spawn(process.execPath, [...(command.nodeFlags ?? []), ...command.args], {
    cwd: command.cwd,
    env,
    stdio: command.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr.push(chunk.toString('utf8'));
    if (stderr.length > 50) stderr.shift();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('error', (error) => {
      stderr.push(String(error));
      live.delete(child);
      resolve({ code: null, signal: null });
    });
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
  return {
    process: child,
    exited,
    stderrTail: () => {
      const text = stderr.join('').trimEnd();
      return text ? `--- ${command.name} stderr (end) ---\n${text.split('\n').slice(-20).join('\n')}` : '';
    },
  };
}

/** USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of a process (fields 14 and 15 of /proc/<pid>/stat, counted after its parenthesised name). */
export function cpuSecondsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name, field 3 (state) is index 0: utime (14) and stime (15) are indexes 11 and 12.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime)
    ? (utime + stime) / CLOCK_TICKS_PER_SECOND
    : undefined;
}
