import { describe, expect, it } from 'vitest';
import { filterShape } from './command-trace.ts';

describe('filterShape', () => {
  const CASES: [string, unknown, unknown][] = [
    ['no filter', null, 1],
    ['a value', { _id: 'p1:abc' }, { _id: 1 }],
    ['a key hash is never written', { secret_hash: 'deadbeef' }, { secret_hash: 1 }],
    ['operators kept, values dropped', { _id: { $in: ['a', 'b'] }, v: { $lt: 3 } }, { _id: { $in: 1 }, v: { $lt: 1 } }],
    ['a date is a value', { received_at: { $lt: new Date(0) } }, { received_at: { $lt: 1 } }],
    ['a list of conditions: the first one\'s shape', { $or: [{ projects: 1 }, { 'requests.project_id': 1 }] }, { $or: [{ projects: 1 }] }],
    ['an empty filter', {}, {}],
  ];
  it.each(CASES)('%s', (_name, filter, shape) => {
    expect(filterShape(filter)).toEqual(shape);
  });
});
