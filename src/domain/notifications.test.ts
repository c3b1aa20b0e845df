import { describe, expect, it } from 'vitest';
import { channelTakes, digestBody, emailOf, headline, noticeBody, parseTriggers, signatureHeader, slackBody, verifySignature, type ChannelRules, type NoticeBody, type TriggerRecord } from './notifications.ts';

const channel = (over: Partial<ChannelRules> = {}) => ({
  id: 3,
  created_at: new Date('2026-11-23T10:00:00Z'),
  on: ['issue.created', 'issue.regressed', 'security.burst'] as ChannelRules['on'],
  environment: null,
  level: null,
  frequency: { count: 100, minutes: 60, interval_minutes: 30 },
  crash_free: { threshold: 99, min_sessions: 100 },
  ...over,
});
const at = Date.parse('2026-11-23T11:00:00Z');
const trigger = (over: Partial<TriggerRecord> = {}): TriggerRecord => ({ event: 'issue.created', issue: 7, at, environment: 'production', level: 'error', ...over });

describe('channelTakes', () => {
  it.each([
    ['a trigger it listens to', channel(), trigger(), true],
    ['a trigger it does not listen to', channel({ on: ['issue.regressed'] }), trigger(), false],
    ['a trigger raised before the channel was added', channel(), trigger({ at: Date.parse('2026-11-23T09:59:59Z') }), false],
    ['its environment', channel({ environment: 'production' }), trigger(), true],
    ['another environment', channel({ environment: 'staging' }), trigger(), false],
    ['a trigger without an environment (a burst) through an environment filter', channel({ environment: 'staging' }), trigger({ event: 'security.burst', environment: undefined, level: 'warning' }), true],
    ['its level', channel({ level: 'error' }), trigger(), true],
    ['a more severe level', channel({ level: 'warning' }), trigger({ level: 'fatal' }), true],
    ['a less severe level', channel({ level: 'fatal' }), trigger(), false],
    ["another channel's rule", channel({ on: ['issue.frequency'] }), trigger({ event: 'issue.frequency', channel: 4 }), false],
    ['its own rule', channel({ on: ['issue.frequency'] }), trigger({ event: 'issue.frequency', channel: 3 }), true],
  ])('%s', (_what, c, t, expected) => {
    expect(channelTakes(c, t)).toBe(expected);
  });
});

describe('bodies', () => {
  const project = { id: '7', name: 'shop' };
  const issue = { id: '9', title: 'KeyError: price', kind: 'error', level: 'error', status: 'unresolved', event_count: 1, first_seen: 'x', last_seen: 'x', last_release: '1.0', url: 'https://l.example/projects/7/issues/9' };

  it("keeps the trigger's own fields and drops the outbox's bookkeeping", () => {
    const body = noticeBody(trigger({ event: 'security.burst', channel: 3, actor: 'ann', ip: '203.0.113.9', attempts: 5 }), 'd1', project, issue);
    expect(body).toEqual({ event: 'security.burst', delivery: 'd1', triggered_at: new Date(at).toISOString(), project, issue, environment: 'production', actor: 'ann', ip: '203.0.113.9', attempts: 5 });
  });

  it('a digest names 50 and counts the rest', () => {
    const items = Array.from({ length: 50 }, (_, i) => noticeBody(trigger({ issue: i }), `d${i}`, project, { ...issue, id: String(i) }));
    const digest = digestBody('dg', new Date(at), project, items, 120);
    expect(digest).toMatchObject({ event: 'digest', delivery: 'dg', more: 70 });
    expect((digest.items as unknown[]).length).toBe(50);
    expect(slackBody(digest, 'https://l.example').text).toContain('120 notifications');
  });

  it('Slack: event text forms no mention, link or ping, in the text and the blocks', () => {
    const title = '<!channel> <https://evil.example/reset|Reset your password> <@U123> @everyone & @here';
    const body = slackBody(noticeBody(trigger(), 'd1', { id: '7', name: 'shop <!here>' }, { ...issue, title }), 'https://l.example');
    const all = JSON.stringify(body);
    expect(all).not.toMatch(/<!channel>|<!here>|<@U123>|<https:\/\/evil/);
    expect(body.text).toContain('&lt;!channel&gt; &lt;https://evil.example/reset|Reset your password&gt;');
    expect(body.text).toContain('@\u200beveryone &amp; @\u200bhere');
    expect(body.text).toMatch(/<https:\/\/l\.example\/projects\/7\/issues\/9\|Open in Lookout>$/); // the one link is Lookout's
  });

  it('email: the subject names the project and what happened; the HTML escapes', () => {
    const mail = emailOf(noticeBody(trigger(), 'd1', project, { ...issue, title: '<b>x</b>' }), 'https://l.example');
    expect(mail.subject).toBe('[Lookout] shop: New issue: <b>x</b>');
    expect(mail.html).toContain('&lt;b&gt;x&lt;/b&gt;');
    expect(mail.text).toContain(issue.url);
  });
});

describe('signatures', () => {
  const now = new Date('2026-11-23T12:00:00Z');
  const header = signatureHeader('whsec_a', '{"a":1}', now);
  it.each([
    ['the same secret and body', 'whsec_a', '{"a":1}', header, now, true],
    ['another secret', 'whsec_b', '{"a":1}', header, now, false],
    ['a changed body', 'whsec_a', '{"a":2}', header, now, false],
    ['too old', 'whsec_a', '{"a":1}', header, new Date(now.getTime() + 301_000), false],
    ['no v1', 'whsec_a', '{"a":1}', 't=1', now, false],
  ])('%s', (_what, secret, raw, h, when, expected) => {
    expect(verifySignature(secret, raw, h, when)).toBe(expected);
  });
  it('has the documented form', () => {
    expect(header).toMatch(new RegExp(`^t=${now.getTime() / 1000},v1=[0-9a-f]{64}$`));
  });
});

describe('parseTriggers', () => {
  it.each([
    [undefined, { on: ['issue.created', 'issue.regressed', 'security.burst', 'monitor.failed', 'monitor.recovered', 'installation.silent', 'uptime.down', 'uptime.up', 'certificate.expiring'] }],
    ['issue.frequency, release.crash_free', { on: ['issue.frequency', 'release.crash_free'] }],
    ['issue.created,nope', { unknown: ['nope'] }],
  ])('%s', (text, expected) => {
    expect(parseTriggers(text)).toEqual(expected);
  });
});

describe('a monitor’s triggers', () => {
  it.each([
    [{ event: 'monitor.failed', name: 'nightly', environment: 'production', reason: 'missed' }, 'Monitor failed: nightly (production): missed check-in'],
    [{ event: 'monitor.failed', name: 'nightly', environment: 'batch', reason: 'timeout' }, 'Monitor failed: nightly (batch): timed out'],
    [{ event: 'monitor.recovered', name: 'nightly', environment: 'production' }, 'Monitor recovered: nightly (production)'],
  ])('%o reads %s', (fields, line) => {
    const body = { delivery: 'd', triggered_at: '', project: { id: '1', name: 'shop' }, ...fields } as NoticeBody;
    expect(headline(body)).toBe(line);
  });
});
