/**
 * Real Sentry clients nobody here wrote, reporting to a real Lookout (issue
 * 46): Debian's sentry-python 1.9 (errors to /store/, gzip), sentry-ruby 5.3
 * and raven-ruby 3.1 (base64 of zlib), npm's raven 2 (the same), and
 * sentry-go built from the module proxy. Each client is installed by the
 * test when missing (test/helpers/real-clients.ts), run against a DSN of a
 * fresh project, and what it reported is read back through the API: the
 * issue with its frames, source context, breadcrumbs, tags, user, request
 * and contexts, and secrets in local variables filtered.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { boundProject, drained, type TestContext } from './helpers/context.ts';
import { answers, CLIENT_SOURCES, ensureDebian, runClient } from './helpers/real-clients.ts';
import { until } from './helpers/until.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events', 'sessions'], (c) => (ctx = c), { FLUSH_INTERVAL_MS: '100' });

const PYTHON = '/usr/bin/python3'; // Debian's interpreter: its packages are Debian's, not a pyenv's

/** A fresh project, its DSN, and its one issue once it is there (with the latest event). */
async function project() {
  const p = await boundProject(ctx);
  const dsn = `http://${p.publicKey}@${new URL(ctx.api).host}/${p.id}`;
  const issue = async () => {
    await until(async () => (await p.get('/issues')).body.total >= 1, 30_000);
    await drained(ctx);
    const [first] = (await p.get('/issues')).body.issues as { id: string }[];
    return (await p.get(`/issues/${first!.id}`)).body;
  };
  return { ...p, dsn, issue };
}

/** The frames of an event's outermost exception. */
const framesOf = (event: any): any[] => event.exception.values.at(-1).stacktrace.frames;

describe("Debian's sentry-python 1.9 (python3-sentry-sdk)", () => {
  beforeAll(() => ensureDebian(['python3-sentry-sdk'], () => answers(PYTHON, ['-c', 'import sentry_sdk'])), 600_000);
  const python = (dsn: string, scenario: string, tag: string) => runClient(PYTHON, [path.join(CLIENT_SOURCES, 'python-client.py'), dsn, scenario, tag]);

  it('capture_exception: the issue with its frames, source context, variables (a token filtered), breadcrumbs, tags, user and contexts', async () => {
    const p = await project();
    await python(p.dsn, 'exception', 'py-exc');
    const issue = await p.issue();
    expect(issue).toMatchObject({ kind: 'error', exception_type: 'TypeError', last_release: 'shop@1.4.2' });
    expect(issue.title).toMatch(/^TypeError: unsupported operand/);
    expect(issue.culprit).toContain('checkout');
    const event = issue.latest_event;
    const crash = framesOf(event).at(-1);
    expect(crash).toMatchObject({ function: 'checkout', context_line: expect.stringContaining('cart_total / discount') });
    expect(crash.pre_context.length).toBeGreaterThan(0);
    expect(crash.vars.api_token).toBe('[Filtered]');
    expect(event.breadcrumbs.values).toEqual(expect.arrayContaining([expect.objectContaining({ message: 'added 3 items', category: 'cart' })]));
    expect(event.tags).toMatchObject({ scenario: 'py-exc' });
    expect(event.user).toMatchObject({ id: '42', email: 'ada@example.com' });
    expect(event.contexts.runtime).toMatchObject({ name: 'CPython' });
    expect(event.environment).toBe('production');
  });

  it('capture_message', async () => {
    const p = await project();
    await python(p.dsn, 'message', 'py-msg');
    const issue = await p.issue();
    expect(issue).toMatchObject({ title: 'py message py-msg', level: 'warning' });
  });

  it('logging.error with params: the issue is titled with the params applied', async () => {
    const p = await project();
    await python(p.dsn, 'logging', 'py-log');
    const issue = await p.issue();
    expect(issue.title).toBe('py log error py-log for order 1042');
    expect(issue.latest_event.logentry).toMatchObject({ message: 'py log error %s for order %d', params: ['py-log', 1042] });
    expect(issue.latest_event.logger).toBe('shop.payments');
  });

  it('a WSGI request error: the request (URL, method, headers) with the exception', async () => {
    const p = await project();
    await python(p.dsn, 'wsgi', 'py-wsgi');
    const issue = await p.issue();
    expect(issue.title).toBe('ValueError: wsgi failure py-wsgi');
    expect(issue.latest_event.request).toMatchObject({ method: 'GET', url: expect.stringContaining('/cart/checkout'), query_string: 'step=2' });
  });
});
