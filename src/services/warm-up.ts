/**
 * Before an API process takes requests it rehearses taking events (issue 66: a fresh instance's first burst). V8
 * compiles a function for speed only once it has run many times, so a fresh process took the first 120 error events
 * sent at once in about twice the time of the same burst later. The rehearsal runs the work of taking an event that
 * is this process' own (parsing, normalising, scrubbing, checking against the schema, fingerprinting, packing, the
 * job's entry) on events shaped as SDKs send them: native error events, sign-in attempts and envelopes. It writes
 * nothing and counts nothing. bench:burst's first 120 on a slow host, in one sitting, four fresh starts each: p50
 * 401–609 ms and p99 625–839 without it; with 300 rounds p50 352–479, p99 536–631 (docs/performance.md).
 */
import type { EventsService } from './events.service.ts';
import type { SentryService } from './sentry.service.ts';

type Rehearsing = { events: Pick<EventsService, 'rehearse'>; sentry: Pick<SentryService, 'rehearse'> };

const WORDS = ['order', 'invoice', 'payment', 'stock', 'customer', 'ledger', 'report', 'export'];
const word = (i: number) => WORDS[i % WORDS.length]!;

/** An error event as a server SDK sends one: 20 frames (the last three in the app, with source and variables), 20 breadcrumbs. */
function errorEvent(i: number, at: Date): Record<string, unknown> {
  const frames = Array.from({ length: 20 }, (_, f) =>
    f < 17
      ? { filename: `lib/site-packages/web/h${f}.py`, function: `handle${f}`, lineno: 40 + f, in_app: false }
      : {
          filename: `app/${word(i)}/${word(f)}.py`,
          function: `${word(f)}_lookup`,
          module: `app.${word(i)}.${word(f)}`,
          lineno: 40 + f,
          in_app: true,
          pre_context: [`def ${word(f)}_lookup(key):`],
          context_line: `    return ${word(i)}.get(key)["${word(f + 1)}"]`,
          post_context: [''],
          vars: { key: `${1000 + f}`, retries: f % 3 },
        },
  );
  return {
    event_id: (i + 1).toString(16).padStart(32, '0'),
    timestamp: at.toISOString(),
    platform: 'python',
    level: 'error',
    logger: `app.${word(i)}`,
    server_name: 'web-1',
    release: 'app@1.0.0',
    environment: 'production',
    transaction: `/${word(i)}/${word(i + 1)}`,
    exception: { values: [{ type: `${word(i)}Error`, value: `${word(i + 2)} not found for ${word(i + 3)} ${i}`, mechanism: { type: 'framework', handled: false }, stacktrace: { frames } }] },
    breadcrumbs: { values: Array.from({ length: 20 }, (_, b) => ({ timestamp: at.getTime() / 1000 - 20 + b, category: 'http', message: `GET /${word(b)}` })) },
    request: { url: `https://shop.example.com/${word(i)}?page=${i}`, method: 'POST', headers: { 'User-Agent': 'Mozilla/5.0', Cookie: 'session=rehearsal' } },
    user: { id: String(i), email: `user${i}@example.com`, ip_address: '192.0.2.1' },
    tags: { company: 'rehearsal', region: 'eu' },
    contexts: { runtime: { name: 'CPython', version: '3.12.3' }, os: { name: 'Linux' } },
  };
}

/**
 * Rehearses `rounds` rounds of one native error event, one sign-in attempt and one envelope; answers how long they
 * took (ms), or the error that stopped them (the API starts all the same: a rehearsal only saves time).
 */
export function rehearseIngest(deps: Rehearsing, rounds: number): { ms: number; error?: string } {
  const started = performance.now();
  try {
    rehearse(deps, rounds);
  } catch (err) {
    return { ms: performance.now() - started, error: (err as Error).message };
  }
  return { ms: performance.now() - started };
}

function rehearse(deps: Rehearsing, rounds: number): void {
  const at = new Date();
  for (let i = 0; i < rounds; i++) {
    deps.events.rehearse(JSON.parse(JSON.stringify(errorEvent(i, at))), at);
    const attempt = {
      event_id: (i + 1).toString(16).padStart(32, 'a'),
      timestamp: at.toISOString(),
      security: { kind: i % 3 ? 'login_failed' : 'login_succeeded', actor: `user${i % 40}@example.com`, ip: `198.51.100.${i % 250}`, outcome: 'wrong password' },
    };
    deps.events.rehearse(JSON.parse(JSON.stringify(attempt)), at);
    const payload = JSON.stringify({ ...errorEvent(i, at), event_id: undefined });
    const header = JSON.stringify({ event_id: (i + 1).toString(16).padStart(32, 'b'), sent_at: at.toISOString() });
    deps.sentry.rehearse(Buffer.from(`${header}\n{"type":"event","length":${Buffer.byteLength(payload)}}\n${payload}\n`), at);
  }
}
