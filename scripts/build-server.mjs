#!/usr/bin/env node
// Builds the server (the CLI, the API, the worker) from its TypeScript sources into one ES module,
// dist/server/lookout.mjs, with esbuild: dependencies stay in node_modules, a source map sits beside it so stack
// traces name the sources. `npm start` and the image run it; tsx stays for development and tests. `--if-stale`
// builds only when a source is newer than the last build. The new build replaces the old by a rename, so a process
// starting meanwhile reads one whole build or the other.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildInto, newestSource, upToDate } from './build-lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist', 'server');
const bundle = path.join(out, 'lookout.mjs');
const SOURCES = ['src', 'workers', 'config'];

const sources = () =>
  newestSource(
    [path.join(root, 'package-lock.json'), path.join(root, 'tsconfig.json'), fileURLToPath(import.meta.url), path.join(root, 'scripts', 'build-lib.mjs')],
    SOURCES.map((dir) => path.join(root, dir)),
    (name) => /\.tsx?$/.test(name),
  );

if (process.argv.includes('--if-stale') && upToDate(bundle, sources())) process.exit(0);

await buildInto(out, (staging) =>
  build({
    entryPoints: [path.join(root, 'src', 'cli', 'main.ts')],
    outfile: path.join(staging, 'lookout.mjs'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
  }),
);
process.stderr.write(`lookout: server built (${path.relative(root, bundle)}, ${Math.round(fs.statSync(bundle).size / 1024)} KiB)\n`);
