/**
 * Admin changes hold at once in every API process, whatever each has cached
 * (KEY_CACHE_SECONDS is a minute here): two real `lookout api` processes, the
 * changes made by the admin CLI, a third process.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../src/embedded/process.ts';
import { makeProject, startTestContext, type TestContext } from './helpers/context.ts';
import { runCli, startProcess } from './helpers/process.ts';

let ctx: TestContext;
let apis: ReturnType<typeof startProcess>[] = [];
const urls: string[] = [];
beforeAll(async () => {
  ctx = await startTestContext();
  for (let i = 0; i < 2; i++) {
    const api = startProcess(['api'], { ...ctx.env, KEY_CACHE_SECONDS: '60', PORT: String(await freePort()) }, /API listening on (http:\/\/\S+)/);
    apis.push(api);
    urls.push((await api.matched)[1]!);
  }
});
afterAll(async () => {
  await Promise.all(apis.map((a) => a.stop()));
  apis = [];
  await ctx?.close();
});

const activate = (api: string, key: string, instance: string) =>
  fetch(`${api}/api/v1/sdk/activate`, { method: 'POST', headers: { 'x-service-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ instance_id: instance }) });
const config = (api: string, key: string, instance: string) => fetch(`${api}/api/v1/sdk/config`, { headers: { 'x-service-key': key, 'x-service-instance': instance } });

it('an unbind and a key rotation made with the admin CLI hold at once in every API process', async () => {
  const [one, two] = urls as [string, string];
  const p = await makeProject(ctx);
  expect((await activate(one, p.secret, 'first-installation')).status).toBe(200);
  expect((await config(two, p.secret, 'first-installation')).status).toBe(200); // process two caches the bound key

  expect((await runCli(['admin', 'project', 'unbind', '--project', p.project.id], ctx.env)).code).toBe(0);
  expect((await activate(two, p.secret, 'second-installation')).status).toBe(200);
  expect((await config(one, p.secret, 'first-installation')).status).toBe(403);
  expect((await config(one, p.secret, 'second-installation')).status).toBe(200); // process one caches it now

  const rotated = await runCli(['admin', 'key', 'rotate', '--project', p.project.id, '--kind', 'secret'], ctx.env);
  const newKey = JSON.parse(rotated.stdout).secret_key as string;
  expect((await config(one, p.secret, 'second-installation')).status).toBe(401);
  expect((await config(two, p.secret, 'second-installation')).status).toBe(401);
  expect((await config(one, newKey, 'second-installation')).status).toBe(200);
});
