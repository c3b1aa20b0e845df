import { describe, expect, it } from 'vitest';
import { parameterizePath, parameterizeSql, spanGroupDescription } from './parameterize.ts';

describe('paths', () => {
  it.each([
    ['/users/42', '/users/*'],
    ['/users/42/orders/7?page=2#top', '/users/*/orders/*'],
    ['https://shop.example.com/items/550e8400-e29b-41d4-a716-446655440000', '/items/*'],
    ['/files/a3f9c2d4e5b6a7c8d9e0', '/files/*'],
    ['/blog/hello-world', '/blog/hello-world'],
    ['/t/abcDEF123456ghiJKL789mno', '/t/*'],
    ['', '/'],
    ['/', '/'],
  ])('%s → %s', (url, want) => expect(parameterizePath(url)).toBe(want));
});

describe('SQL', () => {
  it.each([
    ["SELECT * FROM users WHERE id = 42 AND name = 'bob'", 'SELECT * FROM users WHERE id = %s AND name = %s'],
    ["select * from t where a in (1, 2, 3) and b in ('x','y')", 'select * from t where a in (%s) and b in (%s)'],
    ["INSERT INTO t (a, b) VALUES (1.5, 'it''s')", 'INSERT INTO t (a, b) VALUES (%s)'],
    ['SELECT  *\n  FROM t2 WHERE x = -7', 'SELECT * FROM t2 WHERE x = %s'],
    ['SELECT col1 FROM table2 WHERE $1 = x', 'SELECT col1 FROM table2 WHERE $1 = x'],
  ])('%s', (sql, want) => expect(parameterizeSql(sql)).toBe(want));

  it('gives one group to the same query with other values', () => {
    const a = spanGroupDescription('db.query', 'SELECT * FROM orders WHERE user_id = 1');
    expect(spanGroupDescription('db.query', 'SELECT * FROM orders WHERE user_id = 99')).toBe(a);
  });
});

describe('span descriptions', () => {
  it('parameterises an HTTP client URL, keeping its method, scheme and host', () => {
    expect(spanGroupDescription('http.client', 'GET https://api.example.com/v1/items/123?x=1')).toBe('GET https://api.example.com/v1/items/*');
  });
  it('keeps others as sent, cut to 500', () => {
    expect(spanGroupDescription('middleware.koa', 'router')).toBe('router');
    expect(spanGroupDescription('function', 'x'.repeat(900))).toHaveLength(500);
  });
});
