/**
 * The shape of the code (issue 67): rooms small enough to read whole. A hand-written module in src/ holds at most
 * MAX_LINES lines (generated code, in src/generated/, excepted); past that it does several jobs. A job file
 * (src/queues/jobs/*.job.ts) is what the API and the worker share, so it imports only domain code and store types;
 * the handlers that digest jobs (workers/) are never imported by the API side (src/).
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const MAX_LINES = 400;

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.test.ts') ? [full] : [];
  });
}

it(`no hand-written module in src/ is over ${MAX_LINES} lines`, () => {
  const long = sources('src')
    .filter((file) => !file.split(path.sep).join('/').startsWith('src/generated/'))
    .map((file) => ({ file, lines: fs.readFileSync(file, 'utf8').split('\n').length }))
    .filter((f) => f.lines > MAX_LINES);
  expect(long).toEqual([]);
});

/** The modules a file imports (static imports and re-exports), as written. */
function importsOf(file: string): string[] {
  return [...fs.readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^'"]*from\s+'([^']+)'/gm)].map((m) => m[1]!);
}

it('a job file imports only domain code and store types', () => {
  const jobs = fs.readdirSync('src/queues/jobs').filter((f) => f.endsWith('.job.ts'));
  expect(jobs.length).toBeGreaterThan(0);
  const stray = jobs.flatMap((f) => importsOf(path.join('src/queues/jobs', f)).filter((m) => !/^\.\.\/\.\.\/(domain|store)\//.test(m)).map((m) => `${f}: ${m}`));
  expect(stray).toEqual([]);
});

it("nothing in src/ imports the worker's handlers", () => {
  const reaching = sources('src').filter((file) => importsOf(file).some((m) => /(^|\/)workers\//.test(m)));
  expect(reaching).toEqual([]);
});

it('path parameters are read by the contracts alone (src/http/params.ts), never from ctx.params by hand', () => {
  const byHand = sources('src').filter((file) => /\bctx\.params\b/.test(fs.readFileSync(file, 'utf8')));
  expect(byHand).toEqual([]);
});
