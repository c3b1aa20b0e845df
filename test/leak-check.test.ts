/**
 * The leak check (test/helpers/leak-check.ts) on leaks made on purpose: a server, a timer, a Redis connection and a
 * child process left open are each named; closed, nothing is.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { Redis } from 'ioredis';
import { expect, inject, it } from 'vitest';
import { leaked, resources } from './helpers/leak-check.ts';
import { until } from './helpers/until.ts';

it('names what a file left open, and nothing once it is closed', async () => {
  const baseline = resources();
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const timer = setInterval(() => {}, 60_000);
  const redis = new Redis(inject('redisUrl'));
  await redis.ping();
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);

  const open = leaked(baseline);
  expect(open).toMatchObject({ TCPServerWrap: 1, Timeout: 1, TCPSocketWrap: 1, ProcessWrap: 1 });

  server.close();
  clearInterval(timer);
  redis.disconnect();
  child.kill();
  await until(async () => Object.keys(leaked(baseline)).length === 0);
  expect(leaked(baseline)).toEqual({});
});
