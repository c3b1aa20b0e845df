#!/usr/bin/env node
// Entry for `npx lookout …`: the TypeScript sources through tsx in a checkout (development, tests); the compiled
// server (dist/server/lookout.mjs, scripts/build-server.mjs) where no sources ship, as in the image. `npm start`
// builds and runs the compiled server itself (scripts/bootstrap.mjs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

// `lookout admin backup` runs on the CPU Lookout's own processes leave, its start included: every thread of this
// process under SCHED_IDLE (`chrt`), which any other process preempts at once; where chrt is missing, at nice 19
// (Linux sets it per thread; threads started later inherit either).
if (process.argv[2] === 'admin' && process.argv[3] === 'backup') {
  const idle = spawnSync('chrt', ['--all-tasks', '--idle', '--pid', '0', String(process.pid)], { stdio: 'ignore' });
  if (idle.status !== 0) {
    for (const task of fs.existsSync('/proc/self/task') ? fs.readdirSync('/proc/self/task') : [String(process.pid)]) {
      try {
        os.setPriority(Number(task), 19);
      } catch {
        /* a thread gone since, or a system without per-thread priorities */
      }
    }
  }
}

const sources = new URL('../src/cli/main.ts', import.meta.url);
if (fs.existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(sources.href);
} else {
  process.setSourceMapsEnabled(true);
  await import('../dist/server/lookout.mjs');
}
