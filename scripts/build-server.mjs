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

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist', 'server');
const bundle = path.join(out, 'lookout.mjs');
const SOURCES = ['src', 'workers', 'config'];

function newestSource() {
  const inputs = [path.join(root, 'package-lock.json'), path.join(root, 'tsconfig.json'), fileURLToPath(import.meta.url)];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.tsx?$/.test(entry.name)) inputs.push(full);
    }
  };
  for (const dir of SOURCES) walk(path.join(root, dir));
  return Math.max(...inputs.map((f) => fs.statSync(f).mtimeMs));
}

if (process.argv.includes('--if-stale') && fs.existsSync(bundle) && fs.statSync(bundle).mtimeMs >= newestSource()) process.exit(0);

fs.mkdirSync(path.dirname(out), { recursive: true });
const staging = fs.mkdtempSync(path.join(path.dirname(out), '.server-'));
fs.chmodSync(staging, 0o755);
try {
  await build({
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
  });
  const old = `${out}.old-${process.pid}`;
  if (fs.existsSync(out)) fs.renameSync(out, old);
  fs.renameSync(staging, out);
  fs.rmSync(old, { recursive: true, force: true });
} catch (err) {
  fs.rmSync(staging, { recursive: true, force: true });
  throw err;
}
process.stderr.write(`lookout: server built (${path.relative(root, bundle)}, ${Math.round(fs.statSync(bundle).size / 1024)} KiB)\n`);
