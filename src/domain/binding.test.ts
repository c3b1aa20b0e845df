import { describe, expect, it } from 'vitest';
import { checkInstance, decideActivation } from './binding.ts';

describe('decideActivation', () => {
  it.each([
    { name: 'unbound key, free instance', projectInstance: null, instanceHolder: null, want: { kind: 'bind' } },
    { name: 'same instance again', projectInstance: 'inst-1', instanceHolder: 1, want: { kind: 'bind' } },
    { name: 'instance claimed by this project only', projectInstance: null, instanceHolder: 1, want: { kind: 'bind' } },
    { name: 'instance bound to another project', projectInstance: null, instanceHolder: 2, want: { kind: 'conflict', reason: 'instance_bound_elsewhere' } },
    { name: 'key bound to another instance', projectInstance: 'inst-2', instanceHolder: null, want: { kind: 'conflict', reason: 'project_has_instance' } },
    { name: 'both: the instance rule is checked first', projectInstance: 'inst-2', instanceHolder: 2, want: { kind: 'conflict', reason: 'instance_bound_elsewhere' } },
  ])('$name', ({ projectInstance, instanceHolder, want }) => {
    expect(decideActivation({ projectId: 1, instanceId: 'inst-1', projectInstance, instanceHolder })).toEqual(want);
  });
});

describe('checkInstance', () => {
  it.each([
    [null, undefined, 'ok'],
    [null, 'anything', 'ok'],
    ['inst-1', undefined, 'missing'],
    ['inst-1', '', 'missing'],
    ['inst-1', 'inst-1', 'ok'],
    ['inst-1', 'inst-2', 'mismatch'],
    ['inst-1', 'INST-1', 'mismatch'],
  ] as const)('bound %s, header %s → %s', (bound, header, want) => {
    expect(checkInstance(bound, header)).toBe(want);
  });
});
