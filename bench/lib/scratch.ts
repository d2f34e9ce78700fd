import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Scratch directories not yet removed, removed on every exit path (error, timeout, Ctrl-C). */
const dirs = new Set<string>();
process.on('exit', () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

export interface ScratchDir {
  readonly path: string;
  remove(): void;
}

/** A fresh directory under the system temporary directory. */
export function scratchDir(prefix: string): ScratchDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  dirs.add(path);
  return {
    path,
    remove() {
      rmSync(path, { recursive: true, force: true });
      dirs.delete(path);
    },
  };
}
