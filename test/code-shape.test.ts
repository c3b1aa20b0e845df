/**
 * The shape of the code (issue 67): rooms small enough to read whole. A hand-written module in src/ holds at most
 * MAX_LINES lines (the generated src/validation/schema-types.ts excepted); past that it does several jobs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const MAX_LINES = 400;
const GENERATED = new Set(['src/validation/schema-types.ts']);

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.test.ts') ? [full] : [];
  });
}

it(`no hand-written module in src/ is over ${MAX_LINES} lines`, () => {
  const long = sources('src')
    .filter((file) => !GENERATED.has(file.split(path.sep).join('/')))
    .map((file) => ({ file, lines: fs.readFileSync(file, 'utf8').split('\n').length }))
    .filter((f) => f.lines > MAX_LINES);
  expect(long).toEqual([]);
});
