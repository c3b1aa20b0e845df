/**
 * An experiment (bench:storm, bench:burst and bench:traces, `BENCH_FRONT=<connections>,<queue>`): HAProxy in
 * front of the API, as a production set-up puts a reverse proxy there, doing what the API's one thread does least
 * well on two cores: holding the clients' connections and refusing a storm's excess before it reaches Node.
 *
 * It keeps at most `<connections>` requests in the API at once (kept-alive connections) and holds the rest in its
 * own queue. The queue may take a burst (up to BURST) until it has stood above `<queue>` for INTERVAL_MS; from then
 * until it falls under half of `<queue>`, that is its bound. Over the bound, a request is refused at once (429, with
 * the gate's `Retry-After` and `X-Sentry-Rate-Limits`) if its key (the secret key's header, or the project in a
 * Sentry route's path) has more than FAIR_FEW requests in flight; a key with fewer goes to the head of the queue, so
 * a project sending little is neither refused nor kept waiting for a storming one. Needs `haproxy` on the PATH
 * (Debian's `haproxy` package); nothing of it is Lookout's yet: its refusals are not in Lookout's counts.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../src/embedded/process.ts';
import type { Stack } from './lib.ts';

/** in flight for one key before its requests may be refused over the bound (and lose their place at the head) */
const FAIR_FEW = 32;

/** the queue a burst may fill before anything is refused (the API's own buffer, ADMIT_BUFFER_ITEMS) */
const BURST = 2500;
/** how long the queue may stand above `queue` before the bound falls to it (CoDel's interval) */
const INTERVAL_MS = 300;

/**
 * The bound's controller, a task in HAProxy's Lua: the queue may hold a burst (BURST) until it has stood above
 * `queue` for INTERVAL_MS; then the bound is `queue` until the queue falls under half of it.
 */
export function frontLua(mapFile: string, queue: number): string {
  return `local standing_since = nil
local shedding = false
core.register_task(function()
  while true do
    local q = tonumber(core.backends["api"]:get_stats().qcur) or 0
    local now = core.now()
    local ms = now.sec * 1000 + now.usec / 1000
    if q > ${queue} then
      standing_since = standing_since or ms
      if not shedding and ms - standing_since >= ${INTERVAL_MS} then
        shedding = true
        core.set_map("${mapFile}", "bound", "${queue}")
      end
    else
      standing_since = nil
      if shedding and q < ${queue / 2} then
        shedding = false
        core.set_map("${mapFile}", "bound", "${BURST}")
      end
    end
    core.msleep(50)
  end
end)
`;
}

export function frontConfig(apis: URL[], port: number, connections: number, files: { lua: string; map: string }): string {
  return `global
  nbthread 1
  maxconn 8000
  lua-load ${files.lua}
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  timeout queue 10s
  timeout http-keep-alive 30s
  option http-keep-alive
frontend fe
  bind 127.0.0.1:${port}
  maxconn 8000
  http-request set-var(txn.key) req.hdr(x-service-key) if { req.hdr(x-service-key) -m found }
  http-request set-var(txn.key) path,field(3,/) if !{ var(txn.key) -m found } { path_beg /api/ }
  http-request track-sc0 var(txn.key) table keys if { var(txn.key) -m found }
  http-request set-priority-class int(-1) if { sc0_trackers le ${FAIR_FEW} }
  http-request set-var(txn.bound) str(bound),map(${files.map},${BURST})
  http-request return status 429 content-type application/json string '{"reason":"busy","message":"Lookout is busy; retry after a second"}' hdr Retry-After 1 hdr X-Sentry-Rate-Limits "1::organization:busy" if { queue(api),sub(txn.bound) gt 0 } { sc0_trackers gt ${FAIR_FEW} }
  default_backend api
backend api
  http-reuse always
${apis.map((api, i) => `  server api${i} ${api.hostname}:${api.port} maxconn ${connections}`).join('\n')}
backend keys
  stick-table type string len 64 size 10k expire 60s
`;
}

/**
 * Where a benchmark's clients send: HAProxy in front of the stack's APIs when `BENCH_FRONT` is set (its CPU counted
 * among the stack's processes, as `front`), else the APIs.
 */
export async function clientUrls(stack: Stack): Promise<string[]> {
  if (!process.env.BENCH_FRONT) return stack.apiUrls;
  const [connections, queue] = process.env.BENCH_FRONT.split(',').map(Number) as [number, number];
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-front-'));
  const [file, lua, map] = ['front.cfg', 'front.lua', 'bound.map'].map((name) => path.join(dir, name)) as [string, string, string];
  fs.writeFileSync(map, `bound ${BURST}\n`);
  fs.writeFileSync(lua, frontLua(map, queue));
  fs.writeFileSync(file, frontConfig(stack.apiUrls.map((url) => new URL(url)), port, connections, { lua, map }));
  const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'inherit'] });
  await new Promise((r) => setTimeout(r, 500));
  if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode})`);
  process.on('exit', () => child.kill());
  const processes = stack.processes;
  stack.processes = () => [...processes(), { role: 'front', pid: child.pid! }];
  return [`http://127.0.0.1:${port}`];
}
