/**
 * The generated types (src/generated/schema-types.ts, packages/node/src/api-types.ts) are what the schemas give
 * today: a schema edited without `npm run contracts` fails here.
 */
import fs from 'node:fs';
import { expect, it } from 'vitest';
import { contractTypes } from '../scripts/contract-types.ts';

it('the generated types match the schemas', async () => {
  for (const [file, text] of Object.entries(await contractTypes())) {
    expect(fs.readFileSync(new URL(`../${file}`, import.meta.url), 'utf8'), `${file} is stale: run npm run contracts`).toBe(text);
  }
});
