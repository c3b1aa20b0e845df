/**
 * Realistic error events for the benchmarks: about 3 KB of JSON each, as a
 * server SDK sends them, with 20 frames (the 3 in-app ones with source lines
 * and variables), 20 breadcrumbs, a request, user, tags and contexts. Each
 * exception type has its own in-app frames, so each groups into
 * one issue.
 */
import crypto from 'node:crypto';

const WORDS = ['cart', 'order', 'invoice', 'payment', 'stock', 'price', 'customer', 'shipping', 'coupon', 'refund', 'ledger', 'report', 'export', 'import', 'session', 'search', 'catalog', 'tax', 'currency', 'warehouse'];
export const LEVELS = ['error', 'error', 'error', 'warning', 'fatal'] as const;

/** A word of the vocabulary, by number (titles and culprits are made of these). */
export const word = (i: number) => WORDS[i % WORDS.length]!;

/** The exception type of kind `k`: two words and a number, so every kind is its own issue. */
export function exceptionType(k: number): string {
  const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);
  return `${cap(word(k))}${cap(word(Math.floor(k / WORDS.length) + 3))}Error${k}`;
}

function frame(k: number, i: number, inApp: boolean) {
  const fn = `${word(k + i)}_${word(i * 7 + 1)}`;
  if (!inApp) return { filename: `lib/h${i}.py`, function: `f${i}`, lineno: 40 + i, in_app: false };
  const base = { filename: `shop/${word(k)}/${word(i)}.py`, function: fn, module: `shop.${word(k)}.${word(i)}`, lineno: 40 + i, in_app: true };
  return {
    ...base,
    pre_context: [`def ${fn}(${word(i)}_id):`],
    context_line: `    return ${word(k)}.lookup(${word(i)}_id)["${word(i + 1)}"]`,
    post_context: [''],
    vars: { [`${word(i)}_id`]: `${1000 + i}`, retries: i % 3 },
  };
}

/**
 * One error event of kind `k` (its issue), at `at`, with the release,
 * environment and company given; about 3 KB as JSON.
 */
export function realisticErrorEvent(k: number, opts: { at: Date; release: string; environment: string; company: string; level?: string; large?: boolean }) {
  // large: about 6 KB, a deeper stack (28 frames, 6 in-app) and more breadcrumbs, as bench:growth sends them
  const [depth, inApp, crumbs] = opts.large ? [28, 6, 30] : [20, 3, 20];
  const frames = Array.from({ length: depth }, (_, i) => frame(k, i, i >= depth - inApp));
  const t = opts.at.getTime() / 1000;
  return {
    event_id: crypto.randomBytes(16).toString('hex'),
    timestamp: opts.at.toISOString(),
    platform: 'python',
    level: opts.level ?? LEVELS[k % LEVELS.length],
    logger: `shop.${word(k)}`,
    server_name: `web-${k % 4}`,
    release: opts.release,
    environment: opts.environment,
    transaction: `/${word(k)}/${word(k + 1)}`,
    exception: { values: [{ type: exceptionType(k), value: `${word(k + 2)} ${word(k + 3)} not found for ${word(k + 4)}`, mechanism: { type: 'framework', handled: false }, stacktrace: { frames } }] },
    breadcrumbs: {
      values: Array.from({ length: crumbs }, (_, i) => ({ timestamp: Math.round(t) - crumbs + i, category: 'http', message: `GET /${word(i)}` })),
    },
    request: { url: `https://shop.example.com/${word(k)}/${word(k + 1)}`, method: 'POST', headers: { 'User-Agent': 'Mozilla/5.0' } },
    user: { id: String(k * 31 + 7), email: `user${k % 50}@example.com` },
    tags: { company: opts.company, region: 'eu' },
    contexts: { runtime: { name: 'CPython', version: '3.12.3' }, os: { name: 'Linux' } },
  };
}
