#!/usr/bin/env node
// Builds the web dashboard (src/web) into dist/web with esbuild: hashed, minified ES modules and CSS, the
// chart library in its own chunk loaded only by a release page, an index.html naming them, and manifest.json
// with each file's gzipped size. `--if-stale` builds only when a source is newer than the last build, so
// `npm start` and `npm test` build on a fresh clone and skip the work after. The new build replaces the old
// by renames, so a server starting meanwhile reads one whole build or the other.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildInto, newestSource, upToDate } from './build-lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const source = path.join(root, 'src', 'web');
const out = path.join(root, 'dist', 'web');
const manifestPath = path.join(out, 'manifest.json');

const sources = () => newestSource([path.join(root, 'package-lock.json'), fileURLToPath(import.meta.url), path.join(root, 'scripts', 'build-lib.mjs')], [source]);

if (process.argv.includes('--if-stale') && upToDate(manifestPath, sources())) process.exit(0);

await buildInto(out, async (staging) => {
  const result = await build({
    entryPoints: [path.join(source, 'main.tsx')],
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: path.join(staging, 'assets'),
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    metafile: true,
    legalComments: 'linked',
    logLevel: 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs);
  const asset = (file) => `/assets/${path.basename(file)}`;
  const [entryJs] = outputs.find(([, o]) => o.entryPoint?.endsWith('main.tsx')) ?? [];
  const css = outputs.filter(([file]) => file.endsWith('.css')).map(([file]) => asset(file));
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lookout</title>
<link rel="icon" href="data:,">
${css.map((href) => `<link rel="stylesheet" href="${href}">`).join('\n')}
<script type="module" src="${asset(entryJs)}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Lookout dashboard needs JavaScript.</noscript>
</body>
</html>
`;
  fs.writeFileSync(path.join(staging, 'index.html'), html);
  const sizes = {};
  for (const file of fs.readdirSync(path.join(staging, 'assets'))) {
    const body = fs.readFileSync(path.join(staging, 'assets', file));
    sizes[`/assets/${file}`] = { bytes: body.length, gzip: zlib.gzipSync(body, { level: 9 }).length };
  }
  const chunks = outputs.filter(([file]) => file.endsWith('.js') && file !== entryJs).map(([file]) => asset(file));
  const manifest = { entry: asset(entryJs), css, chunks, sizes, built_at: new Date().toISOString() };
  fs.writeFileSync(path.join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const gz = (files) => files.reduce((n, f) => n + (sizes[f]?.gzip ?? 0), 0);
  process.stderr.write(`lookout: dashboard built (first page ${gz([manifest.entry, ...css])} B gzipped; charts ${gz(chunks)} B more)\n`);
});
