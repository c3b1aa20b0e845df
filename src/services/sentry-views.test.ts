import { describe, expect, it } from 'vitest';
import type { ProjectDoc } from '../store/projects.store.ts';
import { sentryEvent, sentryIssue, shortVersion, tagsOf } from './sentry-views.ts';

const project = { _id: 7, org_id: 1, name: 'Shop', slug: 'shop', enabled: true, created_at: new Date('2026-01-01T00:00:00Z') } as ProjectDoc;
const facts = { event_id: 'a'.repeat(32), at: '2026-11-29T10:00:00.000Z', issue: '51', project, title: 'KeyError: partner_id' };

describe('an event as Sentry answers it', () => {
  it('gives its frames Sentry’s names, their source lines as numbered pairs', () => {
    const event = sentryEvent(
      {
        exception: {
          values: [
            {
              type: 'KeyError',
              value: "'partner_id'",
              mechanism: { type: 'generic', handled: false },
              stacktrace: { frames: [{ filename: 'app/sale.py', abs_path: '/srv/app/sale.py', function: 'confirm', lineno: 12, colno: 4, in_app: true, pre_context: ['a', 'b'], context_line: 'c', post_context: ['d'] }] },
            },
          ],
        },
      },
      facts,
    );
    expect(event.entries).toEqual([
      {
        type: 'exception',
        data: {
          values: [
            {
              type: 'KeyError',
              value: "'partner_id'",
              module: null,
              mechanism: { type: 'generic', handled: false },
              stacktrace: {
                frames: [
                  { filename: 'app/sale.py', absPath: '/srv/app/sale.py', module: null, package: null, function: 'confirm', lineNo: 12, colNo: 4, platform: null, sourceLink: null, inApp: true, context: [[10, 'a'], [11, 'b'], [12, 'c'], [13, 'd']] },
                ],
              },
            },
          ],
        },
      },
    ]);
  });

  it.each([
    ['a message', { message: 'disk full' }, [{ type: 'message', data: { formatted: 'disk full' } }]],
    ['a log entry', { logentry: { formatted: 'user 7 left' } }, [{ type: 'message', data: { formatted: 'user 7 left' } }]],
    [
      'breadcrumbs as a list, times in seconds',
      { breadcrumbs: [{ timestamp: 1_764_410_400, category: 'sql', message: 'SELECT 1' }] },
      [{ type: 'breadcrumbs', data: { values: [{ timestamp: '2025-11-29T10:00:00.000Z', type: 'default', category: 'sql', level: 'info', message: 'SELECT 1', data: null }] } }],
    ],
    [
      'a request whose URL is not absolute: no URL (the MCP server requires one that is)',
      { request: { url: '/cart', method: 'POST', headers: { Accept: 'text/html' } } },
      [{ type: 'request', data: { url: null, method: 'POST', query: null, headers: [['Accept', 'text/html']] } }],
    ],
    ['nothing of use', { exception: { values: ['nonsense'] }, breadcrumbs: { values: [null] } }, [{ type: 'breadcrumbs', data: { values: [] } }]],
  ])('%s', (_name, payload, entries) => expect(sentryEvent(payload, facts).entries).toEqual(entries));

  it.each([
    [{ tags: { browser: 'Chrome', n: 3 } }, [{ key: 'browser', value: 'Chrome' }, { key: 'n', value: '3' }]],
    [{ tags: [['os', 'Linux'], ['bad']] }, [{ key: 'os', value: 'Linux' }]],
    [{ tags: 'nonsense' }, []],
  ])('tags %j', (payload, tags) => expect(tagsOf(payload)).toEqual(tags));
});

describe('an issue as Sentry answers it', () => {
  const issue = {
    id: '51',
    kind: 'error',
    title: 'KeyError',
    culprit: '',
    exception_type: 'KeyError',
    level: 'error',
    status: 'ignored',
    first_seen: '2026-11-28T10:00:00.000Z',
    last_seen: '2026-11-29T10:00:00.000Z',
    event_count: 12,
    regressed: false,
    resolved_in_next_release: false,
    ignore_until: null,
    ignore_until_count: 100,
    assignee: null,
    first_release: 'shop@1.2.0',
    last_release: null,
    users: 3,
  } as unknown as Parameters<typeof sentryIssue>[0];

  it('names its short id, count as a string, its ignore and a permalink', () => {
    expect(sentryIssue(issue, project, 'https://lookout.example.com')).toMatchObject({
      id: '51',
      shortId: 'SHOP-1F',
      count: '12',
      userCount: 3,
      culprit: null,
      status: 'ignored',
      substatus: 'archived_until_condition_met',
      statusDetails: { ignoreCount: 100 },
      permalink: 'https://lookout.example.com/projects/7/issues/51',
      project: { id: '7', slug: 'shop', name: 'Shop' },
      firstRelease: { version: 'shop@1.2.0', shortVersion: '1.2.0' },
    });
  });

  it.each([
    ['shop@1.2.0', '1.2.0'],
    ['1.2.0', '1.2.0'],
    ['@acme/shop@2.0.0', '2.0.0'],
  ])('the short version of %s is %s', (v, short) => expect(shortVersion(v)).toBe(short));
});
