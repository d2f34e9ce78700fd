import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The start of an open file mapped read-only and shared (native/shm-view.c): what another process writes to it
 * through its own mapping is read here without a system call. Undefined where the addon was not built
 * (native/build.mjs) or the file cannot be mapped; the caller then reads the bytes with `pread`. `fd` stays
 * open and the caller's: closing a descriptor of a file drops every POSIX lock this process holds on it.
 */
export function mapFileStart(fd: number, bytes: number): ArrayBuffer | undefined {
  try {
    return addon()?.mapStart(fd, bytes);
  } catch {
    return undefined;
  }
}

interface ShmViewAddon {
  mapStart(fd: number, bytes: number): ArrayBuffer;
}

let loaded: ShmViewAddon | null | undefined;

function addon(): ShmViewAddon | undefined {
  if (loaded === undefined) {
    try {
      const require = createRequire(import.meta.url);
      // The package's root, from its entry point: the same from the sources and from the CLI's bundle.
      const root = dirname(dirname(require.resolve('@hearth/server')));
      loaded = require(join(root, 'build/Release/shm_view.node')) as ShmViewAddon;
    } catch {
      loaded = null;
    }
  }
  return loaded ?? undefined;
}
