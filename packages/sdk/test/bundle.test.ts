import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

/**
 * The browser entry (package.json `exports["."].browser`, src/browser.ts) bundles for browsers with no
 * Node built-in: the loopback listener and the system browser opener stay in the Node entry.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BROWSER_ENTRY = 'packages/sdk/src/browser.ts';
const NODE_ENTRY = 'packages/sdk/src/index.ts';

const BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
const isBuiltin = (path: string) => path.startsWith('node:') || BUILTINS.has(path);

/** Bundles in memory: the errors, the metafile and the output files. */
async function bundle(options: BuildOptions): Promise<{
  errors: unknown[];
  metafile: Metafile;
  outputFiles: { path: string; text: string }[];
}> {
  const result = await build({
    absWorkingDir: ROOT,
    platform: 'browser',
    format: 'esm',
    bundle: true,
    logLevel: 'silent',
    ...options,
    write: false,
    metafile: true,
  });
  return { errors: result.errors, metafile: result.metafile, outputFiles: result.outputFiles };
}

/**
 * The one Node built-in a browser never loads: HPKE (under ts-mls, the DAVE of browser calls) falls back to
 * `await import("crypto")` only where `globalThis.crypto` is missing, which no browser is. Bundlers see it:
 * webpack needs `resolve.fallback: { crypto: false }` (README, the client library).
 */
const GUARDED_FALLBACKS = new Set([
  'node_modules/@hpke/common/esm/src/algorithm.js',
  'node_modules/@hpke/common/esm/src/utils/misc.js',
]);

/** Every input or import of the bundle that is a Node built-in (but HPKE's guarded dynamic fallback). */
function builtinsIn(metafile: Metafile): string[] {
  const found: string[] = [];
  for (const [input, { imports }] of Object.entries(metafile.inputs)) {
    if (isBuiltin(input)) found.push(input);
    for (const imported of imports) {
      const guarded =
        GUARDED_FALLBACKS.has(input) && imported.path === 'crypto' && imported.kind === 'dynamic-import';
      if (isBuiltin(imported.path) && !guarded) found.push(imported.path);
    }
  }
  return found;
}

describe('the browser bundle (esbuild, platform browser, format esm)', () => {
  it('builds with no Node built-in among its inputs or imports, and no node: in its output', async () => {
    const result = await bundle({ entryPoints: [BROWSER_ENTRY] });
    expect(result.errors).toEqual([]);
    expect(builtinsIn(result.metafile)).toEqual([]);
    expect(Object.keys(result.metafile.inputs)).not.toContain('packages/sdk/src/node-client.ts');
    expect(result.outputFiles).toHaveLength(1);
    expect(result.outputFiles[0]?.text).not.toContain('node:');
  });

  it('exports Client and the namespace sdkpp', async () => {
    const result = await bundle({ entryPoints: [BROWSER_ENTRY] });
    const outputs = Object.values(result.metafile.outputs);
    expect(outputs).toHaveLength(1);
    expect(outputs[0]?.entryPoint).toBe(BROWSER_ENTRY);
    expect(outputs[0]?.exports).toEqual(expect.arrayContaining(['Client', 'sdkpp', 'AuthorizationArgs']));
  });

  it("a browser build of `import '@hearth/sdk'` resolves to the browser entry (the `browser` condition)", async () => {
    const result = await bundle({
      stdin: { contents: "export { Client, sdkpp } from '@hearth/sdk';", resolveDir: ROOT, loader: 'ts' },
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain('packages/sdk/src/browser.ts');
    expect(inputs).not.toContain('packages/sdk/src/index.ts');
    expect(builtinsIn(result.metafile)).toEqual([]);
  });

  it('the check bites: the Node entry does import Node built-ins', async () => {
    const result = await bundle({ entryPoints: [NODE_ENTRY], platform: 'node' });
    expect(builtinsIn(result.metafile)).toEqual(expect.arrayContaining(['node:child_process', 'node:http']));
  });
});
