#!/usr/bin/env node
// Entry for `npx lookout …`: the TypeScript sources through tsx in a checkout (development, tests); the compiled
// server (dist/server/lookout.mjs, scripts/build-server.mjs) where no sources ship, as in the image. `npm start`
// builds and runs the compiled server itself (scripts/bootstrap.mjs).
import fs from 'node:fs';

const sources = new URL('../src/cli/main.ts', import.meta.url);
if (fs.existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(sources.href);
} else {
  process.setSourceMapsEnabled(true);
  await import('../dist/server/lookout.mjs');
}
