import { describe, expect, it } from 'vitest';
import { levelOfSeverity, readLogContainer, readOtelLog, type LogItemError } from './logs.ts';

const T = 'a'.repeat(32);

describe('a log container', () => {
  const line = (extra: Record<string, unknown> = {}) => ({ timestamp: 1795953540.5, trace_id: T, level: 'info', body: 'loading user 42', severity_number: 9, ...extra });

  it('reads its lines with typed attributes, the span they were written in, and secrets filtered', () => {
    const attributes = {
      'sentry.trace.parent_span_id': { type: 'string', value: 'b'.repeat(16) },
      'user.id': { type: 'integer', value: 42 },
      big: { type: 'integer', value: '9007199254740993' },
      ratio: { type: 'double', value: 0.5 },
      cached: { type: 'boolean', value: true },
      password: { type: 'string', value: 'hunter2' },
      card: { type: 'string', value: 'paid with 4111 1111 1111 1111' },
      odd: { type: 'array', value: [1] },
    };
    const { lines, skipped } = readLogContainer({ items: [line({ attributes })] }, 1);
    expect(skipped).toBe(0);
    expect(lines[0]).toEqual({
      t: 1795953540500,
      level: 'info',
      sev: 9,
      body: 'loading user 42',
      trace_id: T,
      span_id: 'b'.repeat(16),
      attrs: { 'sentry.trace.parent_span_id': 'b'.repeat(16), 'user.id': 42, big: 9007199254740992, ratio: 0.5, cached: true, password: '[Filtered]', card: 'paid with [Filtered]' },
      dropped_attributes: 1,
    });
  });

  it('is refused whole when its item_count differs from its lines', () => {
    expect(() => readLogContainer({ items: [line(), line()] }, 3)).toThrow(expect.objectContaining({ reason: 'invalid_item_count' }) as LogItemError);
  });

  it('leaves out a line without a time or a body, and reads a level from a severity', () => {
    const { lines, skipped } = readLogContainer({ items: [line({ body: undefined }), line({ timestamp: 'now' }), line({ level: undefined, severity_number: 18 })] }, undefined);
    expect(skipped).toBe(2);
    expect(lines[0]).toMatchObject({ level: 'error', sev: 18 });
  });

  it.each([
    [1, 'trace'],
    [5, 'debug'],
    [9, 'info'],
    [13, 'warn'],
    [17, 'error'],
    [24, 'fatal'],
  ])('severity %s is %s', (sev, level) => expect(levelOfSeverity(sev)).toBe(level));
});

describe('an otel_log record', () => {
  it('is read with its attributes', () => {
    const line = readOtelLog({
      time_unix_nano: '1795953540500000000',
      severity_text: 'WARN',
      severity_number: 13,
      body: { string_value: 'disk almost full' },
      trace_id: T,
      attributes: [
        { key: 'host', value: { stringValue: 'web-1' } },
        { key: 'free', value: { intValue: '12' } },
      ],
    });
    expect(line).toMatchObject({ t: 1795953540500, level: 'warn', sev: 13, body: 'disk almost full', trace_id: T, attrs: { host: 'web-1', free: 12 } });
  });
  it('without a time is not a line', () => expect(readOtelLog({ body: 'x' })).toBeNull());
});
