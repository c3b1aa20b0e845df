/**
 * A minified web bundle with a source map of about 2 MB for `bench:pipeline --sourcemaps` (issue 52): generated
 * handlers built by esbuild (minified, with its map), uploaded as sentry-cli uploads it (an artifact bundle with a
 * debug ID, through the same service the `/api/0` routes call), and the browser events that throw in it, their frames
 * at the minified positions of the handlers' `throw`s.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import esbuild from 'esbuild';
import { zipSync, strToU8 } from 'fflate';
import type { Runtime } from '../src/runtime.ts';

/** Handlers in the bundle: about 2 MB of map. */
const HANDLERS = 4000;
const URL_OF_BUNDLE = 'https://shop.example/static/app.min.js';

export interface BrowserBundle {
  url: string;
  debugId: string;
  /** where each handler throws in the minified file (line, column from 1) */
  throws: { lineno: number; colno: number }[];
  mapBytes: number;
}

/** Builds the bundle and uploads it for `project`; what the events need to point into it. */
export async function uploadBrowserBundle(runtime: Runtime, project: number): Promise<BrowserBundle> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-bundle-'));
  try {
    const handlers = Array.from(
      { length: HANDLERS },
      (_, k) => `export function checkoutStep${k}(order) {\n  const total = order.items.reduce((sum, item) => sum + item.price * item.quantity, 0);\n  if (total > ${k}) {\n    throw new Error('step ${k}: the order is over its limit');\n  }\n  return total;\n}\n`,
    );
    fs.writeFileSync(path.join(dir, 'handlers.js'), handlers.join('\n'));
    fs.writeFileSync(path.join(dir, 'main.js'), "import * as steps from './handlers.js';\nwindow.steps = steps;\n");
    await esbuild.build({ entryPoints: [path.join(dir, 'main.js')], bundle: true, minify: true, sourcemap: true, outfile: path.join(dir, 'out', 'app.min.js'), logLevel: 'silent' });
    const debugId = crypto.randomUUID();
    const code = `${fs.readFileSync(path.join(dir, 'out', 'app.min.js'), 'utf8')}\n//# debugId=${debugId}\n`;
    const map = fs.readFileSync(path.join(dir, 'out', 'app.min.js.map'), 'utf8');
    const lines = code.split('\n');
    const throws = Array.from({ length: HANDLERS }, (_, k) => {
      const marker = `step ${k}: the order`;
      const line = lines.findIndex((l) => l.includes(marker));
      return { lineno: line + 1, colno: lines[line]!.indexOf(marker) };
    });
    const manifest = {
      files: {
        'files/_/_/app.min.js': { type: 'minified_source', url: '~/static/app.min.js', headers: { 'debug-id': debugId, sourcemap: 'app.min.js.map' } },
        'files/_/_/app.min.js.map': { type: 'source_map', url: '~/static/app.min.js.map', headers: { 'debug-id': debugId } },
      },
      debug_id: crypto.randomUUID(),
    };
    const zip = Buffer.from(zipSync({ 'manifest.json': strToU8(JSON.stringify(manifest)), 'files/_/_/app.min.js': strToU8(code), 'files/_/_/app.min.js.map': strToU8(map) }));
    const sha1 = crypto.createHash('sha1').update(zip).digest('hex');
    const projectDoc = (await runtime.stores.projects.get(project))!;
    const org = (await runtime.stores.orgs.get(projectDoc.org_id))!;
    await runtime.sourcemaps.addChunks(org._id, [{ name: sha1, data: zip, gzip: false }], new Date());
    const answer = await runtime.sourcemaps.assemble(org, { checksum: sha1, chunks: [sha1], projects: [String(project)] }, new Date());
    if (answer.state !== 'created') throw new Error(`the bundle was not stored: ${JSON.stringify(answer)}`);
    return { url: URL_OF_BUNDLE, debugId, throws, mapBytes: map.length };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A browser error event of handler `k` (three frames in the bundle, as Chromium reports them), as JSON. */
export function browserEvent(bundle: BrowserBundle, k: number, base: { event_id: string; timestamp: string }): string {
  const at = (n: number) => bundle.throws[n % bundle.throws.length]!;
  const frame = (n: number, fn: string) => ({ filename: bundle.url, abs_path: bundle.url, function: fn, in_app: true, ...at(n) });
  return JSON.stringify({
    ...base,
    platform: 'javascript',
    level: 'error',
    release: 'bench@1',
    environment: 'production',
    exception: { values: [{ type: 'Error', value: `step ${k}: the order is over its limit`, stacktrace: { frames: [frame(k + 2, 'r'), frame(k + 1, 'o'), frame(k, 't')] }, mechanism: { type: 'onerror', handled: false } }] },
    debug_meta: { images: [{ type: 'sourcemap', code_file: bundle.url, debug_id: bundle.debugId }] },
    request: { url: 'https://shop.example/checkout', headers: { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36' } },
    tags: { company: `company-${k % 20}` },
  });
}
