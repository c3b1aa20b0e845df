/**
 * Every test file cleans up after itself (issue 67): once its own `afterAll` hooks have run, what it opened (a
 * BullMQ worker, a Redis or MongoDB connection, a server, a child process, a timer) must be closed. This file is a
 * vitest setup file, so its hook runs after the test file's: it compares the process' active resources (Node's
 * `process.getActiveResourcesInfo()`, by kind) with those when the file began, allows a moment for closes under
 * way, and fails the file naming what is still open.
 */
import { afterAll, expect } from 'vitest';

/** how long closes under way may take (a socket's close, a child's exit) */
const SETTLE_MS = 3000;

const count = (kinds: string[]) => kinds.reduce((m, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map<string, number>());
/** The process' active resources now, by kind. */
export const resources = () => count(process.getActiveResourcesInfo());
const before = resources();

/** What is open now beyond what was open when the file began, by kind. */
export function leaked(baseline: Map<string, number> = before): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [kind, n] of resources()) {
    const more = n - (baseline.get(kind) ?? 0);
    if (more > 0) out[kind] = more;
  }
  return out;
}

afterAll(async () => {
  const deadline = Date.now() + SETTLE_MS;
  let open = leaked();
  while (Object.keys(open).length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    open = leaked();
  }
  if (Object.keys(open).length === 0) return;
  const words = Object.entries(open).map(([kind, n]) => `${n} × ${kind}`).join(', ');
  if (process.env.LEAK_CHECK === 'warn') {
    process.stderr.write(`leak-check: ${expect.getState().testPath ?? 'a test file'} left open ${words}\n`);
    return;
  }
  throw new Error(`this test file left open: ${words}; close what it opened in its afterAll`);
}, SETTLE_MS + 2000);
