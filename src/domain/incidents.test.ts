import { describe, expect, it } from 'vitest';
import { monitorIncident } from './incidents.ts';
import type { MonitorEffect } from './monitor-state.ts';

const monitor = { slug: 'nightly', name: 'Nightly backup' };

describe('monitorIncident', () => {
  it.each<[MonitorEffect, object]>([
    [
      { kind: 'failed', id: 'r1', reason: 'missed', at: 1000, first: true, failures: 1 },
      { change: 'occurred', culprit: 'no check-in by the expected time', trigger: { event: 'monitor.failed', monitor: 'nightly', name: 'Nightly backup', environment: 'batch', reason: 'missed', failures: 1 } },
    ],
    [{ kind: 'failed', id: 'r2', reason: 'timeout', at: 2000, first: false, failures: 2 }, { change: 'occurred', culprit: 'the run went past its maximum runtime', trigger: null }],
    [
      { kind: 'recovered', id: 'r3', at: 3000, since: 1000 },
      { change: 'recovered', trigger: { event: 'monitor.recovered', monitor: 'nightly', name: 'Nightly backup', environment: 'batch', since: '1970-01-01T00:00:01.000Z' } },
    ],
  ])('%o', (effect, expected) => {
    const change = monitorIncident(monitor, 'batch', effect);
    expect(change).toMatchObject({ kind: 'monitor', fingerprint: 'monitor:nightly:batch', title: 'Monitor failure: Nightly backup', id: effect.id, at: effect.at, ...expected });
  });
});
