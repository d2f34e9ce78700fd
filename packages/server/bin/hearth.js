#!/usr/bin/env node
// Runs the TypeScript sources directly: no build step between a clone and a running server. The sources are
// bundled by esbuild on the first start and again whenever one of them changes, into a cache beside the
// dependencies: a start then loads one file instead of resolving some 400 modules through tsx's loader
// hooks, which cost about 5 s of CPU per start (less than half of that remains). Where the cache cannot be
// written (a read-only install), tsx runs the sources as before.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SERVER = fileURLToPath(new URL('..', import.meta.url));
// Bare imports in the bundle resolve from here upwards, to the same node_modules the sources use.
const CACHE = join(SERVER, 'node_modules/.cache/hearth-cli');
const BUNDLE = join(CACHE, 'cli.mjs');
const MANIFEST = join(CACHE, 'inputs.json');

/** Packages from node_modules stay imports (native addons, WebAssembly); the workspace's own are bundled. */
const externalDependencies = {
  name: 'external-dependencies',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@hearth/') ? undefined : { path: args.path, external: true },
    );
  },
};

const bundle = await freshBundle().catch(() => undefined);
if (bundle) {
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(bundle).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}

/** The bundle's path, built again when a source it holds is newer than its build or gone. */
async function freshBundle() {
  if (isFresh()) return BUNDLE;
  const { build } = await import('esbuild');
  const startedAt = Date.now();
  const result = await build({
    absWorkingDir: SERVER,
    entryPoints: ['src/cli.ts'],
    outfile: BUNDLE,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    sourcemap: 'external',
    sourcesContent: false,
    metafile: true,
    write: false,
    logLevel: 'silent',
    plugins: [externalDependencies],
  });
  mkdirSync(CACHE, { recursive: true });
  const inputs = Object.keys(result.metafile.inputs).map((input) => join(SERVER, input));
  const code = result.outputFiles.find((file) => file.path === BUNDLE);
  const map = result.outputFiles.find((file) => file.path === `${BUNDLE}.map`);
  if (!code || !map) throw new Error('esbuild wrote no bundle');
  // Each file is written aside, then renamed into place: starts side by side never read a half-written one.
  const put = (path, text) => {
    writeFileSync(`${path}.${process.pid}.tmp`, text);
    renameSync(`${path}.${process.pid}.tmp`, path);
  };
  put(`${BUNDLE}.map`, map.text);
  put(BUNDLE, `${code.text}//# sourceMappingURL=cli.mjs.map\n`);
  put(MANIFEST, JSON.stringify({ node: process.version, startedAt, inputs }));
  return BUNDLE;
}

function isFresh() {
  try {
    const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
    if (manifest.node !== process.version) return false;
    statSync(BUNDLE);
    // The build's start, not the bundle's time: a source saved during a build makes the next start build again.
    return manifest.inputs.every((input) => statSync(input).mtimeMs < manifest.startedAt);
  } catch {
    return false;
  }
}
