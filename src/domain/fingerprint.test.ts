import { describe, expect, it } from 'vitest';
import { describeError, fingerprintOf, groupingParts } from './fingerprint.ts';

const frames = (...fs: [string, string, boolean][]) => fs.map(([module, fn, in_app]) => ({ module, function: fn, in_app }));

describe('groupingParts', () => {
  it.each([
    {
      name: 'explicit fingerprint wins',
      event: { fingerprint: ['db', 'timeout'], exception: { values: [{ type: 'E', value: 'x' }] } },
      parts: ['fingerprint', 'db', 'timeout'],
    },
    {
      name: 'type plus in-app frames',
      event: { exception: { values: [{ type: 'TypeError', value: 'a is undefined', stacktrace: { frames: frames(['lib', 'x', false], ['app.cart', 'total', true]) } }] } },
      parts: ['frames', 'TypeError', 'app.cart:total'],
    },
    {
      name: 'file when no module',
      event: { exception: { values: [{ type: 'E', stacktrace: { frames: [{ filename: 'src/a.js', function: 'f', in_app: true }] } }] } },
      parts: ['frames', 'E', 'src/a.js:f'],
    },
    {
      name: 'type and message without in-app frames',
      event: { exception: { values: [{ type: 'E', value: 'boom', stacktrace: { frames: frames(['lib', 'x', false]) } }] } },
      parts: ['message', 'E', 'boom'],
    },
    { name: 'message-only event', event: { message: 'disk full' }, parts: ['message', 'Error', 'disk full'] },
    {
      name: 'outermost (last) exception value',
      event: { exception: { values: [{ type: 'Cause', value: 'inner' }, { type: 'Outer', value: 'outer' }] } },
      parts: ['message', 'Outer', 'outer'],
    },
    {
      name: "Sentry's {{ default }} alone is the default grouping",
      event: { fingerprint: ['{{ default }}'], exception: { values: [{ type: 'E', value: 'boom' }] } },
      parts: ['message', 'E', 'boom'],
    },
    {
      name: '{{ default }} beside other parts expands in place',
      event: { fingerprint: ['{{ default }}', 'tenant-7'], exception: { values: [{ type: 'E', value: 'boom' }] } },
      parts: ['fingerprint', 'message', 'E', 'boom', 'tenant-7'],
    },
  ])('$name', ({ event, parts }) => {
    expect(groupingParts(event)).toEqual(parts);
  });

  it('line numbers and messages do not split a frame-grouped issue', () => {
    const a = { exception: { values: [{ type: 'E', value: 'id 1', stacktrace: { frames: [{ module: 'm', function: 'f', in_app: true, lineno: 1 } as never] } }] } };
    const b = { exception: { values: [{ type: 'E', value: 'id 2', stacktrace: { frames: [{ module: 'm', function: 'f', in_app: true, lineno: 9 } as never] } }] } };
    expect(fingerprintOf(a)).toBe(fingerprintOf(b));
    expect(fingerprintOf(a)).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('describeError', () => {
  it.each([
    [{ exception: { values: [{ type: 'TypeError', value: 'x' }] } }, { title: 'TypeError: x', culprit: '', exception_type: 'TypeError' }],
    [{ exception: { values: [{ type: 'TypeError' }] } }, { title: 'TypeError', culprit: '', exception_type: 'TypeError' }],
    [{ message: 'disk full' }, { title: 'disk full', culprit: '', exception_type: null }],
    [{ message: 'slow', transaction: 'GET /cart' }, { title: 'slow', culprit: 'GET /cart', exception_type: null }],
    [
      { exception: { values: [{ type: 'E', stacktrace: { frames: [{ module: 'app.cart', function: 'total', in_app: true }, { module: 'lib', function: 'x', in_app: false }] } }] } },
      { title: 'E', culprit: 'app.cart in total', exception_type: 'E' },
    ],
    [{ exception: { values: [{ type: 'E', stacktrace: { frames: [{ filename: 'lib.js', function: 'x' }] } }] } }, { title: 'E', culprit: 'lib.js in x', exception_type: 'E' }],
  ])('%j', (event, want) => {
    expect(describeError(event)).toEqual(want);
  });
});
