/**
 * bench:reads' load generator, in a process of its own: the reads it is given (paths by request number) timed one
 * after another over HTTP, each answer read to its end. The process that filled a project holds that fill's heap;
 * its old-generation collections (10–40 ms) landed in whichever read was in flight. This one holds only the reads.
 *
 * In (stdin, JSON): { base, headers, requests, reads: [{ name, paths }] }.
 * Out (stdout, JSON): { figures: [{ name, p50, p99, samples }], cpu_ms, collections: ["at,ms,kind", …] }.
 */
import http from 'node:http';
import { PerformanceObserver } from 'node:perf_hooks';
import { round, timedInTurn } from './timed.ts';

interface Job {
  base: string;
  headers: Record<string, string>;
  requests: number;
  reads: { name: string; paths: string[] }[];
}

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const job = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Job;

/** Its own collections (kind 1 minor, 4 major): a pause here lengthens the read in flight. */
const collections: string[] = [];
const observer = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) collections.push(`${Math.round(performance.timeOrigin + e.startTime)},${round(e.duration, 2)},${(e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? ''}`);
});
observer.observe({ entryTypes: ['gc'] });

/**
 * A timed read over one kept-alive connection: its answer read to the end and let go, chunk by chunk (node:http,
 * which makes less garbage per answer than fetch's web streams).
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function read(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    http
      .get(`${job.base}${path}`, { headers: job.headers, agent }, (res) => {
        if (res.statusCode !== 200) {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c));
          res.on('end', () => reject(new Error(`GET ${path}: ${res.statusCode} ${text.slice(0, 300)}`)));
          return;
        }
        res.on('end', resolve).on('error', reject).resume();
      })
      .on('error', reject);
  });
}

const started = process.cpuUsage();
const figures = [];
for (const { name, paths } of job.reads) figures.push({ name, ...(await timedInTurn(job.requests, (i) => read(paths[i % paths.length]!))) });
const used = process.cpuUsage(started);
observer.disconnect();
agent.destroy();
process.stdout.write(JSON.stringify({ figures, cpu_ms: (used.user + used.system) / 1000, collections }));
