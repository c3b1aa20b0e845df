import { describe, expect, it } from 'vitest';
import { installationIncident, judgeSilence } from './installations.ts';

const M = 60_000;
const heardAll = () => true;

describe('judgeSilence', () => {
  it.each([
    ['never heard: nothing to judge', { poll: null, ingest: null, silent: null }, 100 * M, null],
    ['heard 29 minutes ago of 30', { poll: 71 * M, ingest: null, silent: null }, 100 * M, null],
    ['unheard for 30 minutes: silent since its last call', { poll: 70 * M, ingest: 60 * M, silent: null }, 100 * M, { kind: 'silent', since: 70 * M }],
    ['a request counts as much as a poll', { poll: 10 * M, ingest: 80 * M, silent: null }, 100 * M, null],
    ['reported, still unheard: nothing more', { poll: 70 * M, ingest: null, silent: 70 * M }, 200 * M, null],
    ['reported, then heard: heard again', { poll: 150 * M, ingest: null, silent: 70 * M }, 200 * M, { kind: 'heard', since: 70 * M }],
  ])('%s', (_what, heard, now, expected) => {
    expect(judgeSilence(heard, 30, now, heardAll)).toEqual(expected);
  });

  it('a silence Lookout could not hear (no API process up for part of it) is not reported', () => {
    const downAt = 85 * M;
    const heardSpan = (from: number, to: number) => !(from <= downAt && downAt < to);
    expect(judgeSilence({ poll: 60 * M, ingest: null, silent: null }, 30, 100 * M, heardSpan)).toBeNull();
    // once Lookout has been up for the whole setting again, it is
    expect(judgeSilence({ poll: 60 * M, ingest: null, silent: null }, 30, 120 * M, heardSpan)).toEqual({ kind: 'silent', since: 60 * M });
  });
});

describe('installationIncident', () => {
  it('a silence opens the issue and notifies; heard again resolves it, telling no one', () => {
    expect(installationIncident('inst-1', { kind: 'silent', since: 70 * M }, 100 * M, 30)).toMatchObject({
      kind: 'installation',
      fingerprint: 'installation:inst-1',
      title: 'Installation silent: inst-1',
      change: 'occurred',
      id: `silent:${70 * M}`,
      trigger: { event: 'installation.silent', instance: 'inst-1', minutes: 30 },
    });
    expect(installationIncident('inst-1', { kind: 'heard', since: 70 * M }, 150 * M, 30)).toMatchObject({ change: 'recovered', id: `heard:${70 * M}`, trigger: null });
  });
});
