/**
 * The README's "First requests" walkthrough, run as written: every `sh`
 * block in order in one bash (so its variables carry over) against a fresh
 * `npm start` (the compiled server), each answer compared with the `json` block that follows
 * it. Only the address is changed, to the fresh instance's. In a sample,
 * `"…"` stands for any value, `"lk_sk_…"` for any string that starts so,
 * and a `"…"` key for further keys.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/embedded/process.ts';
import { NPM_START, runCommand, startProcess } from './helpers/process.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const README_URL = 'http://127.0.0.1:3000';

interface Step {
  command: string;
  answer: unknown;
}

/** The `sh` blocks of a section, each with the `json` block after it (when there is one). */
export function walkthrough(markdown: string, heading: string): Step[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no section "${heading}"`);
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  const steps: Step[] = [];
  for (const [, lang, body] of section.matchAll(/```(\w+)\n([\s\S]*?)```/g)) {
    if (lang === 'sh') steps.push({ command: body!, answer: undefined });
    else if (lang === 'json') steps.at(-1)!.answer = JSON.parse(body!);
  }
  return steps;
}

/** Whether `actual` fits `sample` by the rules in the file comment; returns the path of the first misfit. */
function misfit(actual: unknown, sample: unknown, at = ''): string | null {
  if (sample === '…') return null;
  if (typeof sample === 'string' && sample.includes('…')) {
    const [head, tail] = sample.split('…') as [string, string];
    return typeof actual === 'string' && actual.startsWith(head) && actual.endsWith(tail) ? null : at || '/';
  }
  if (Array.isArray(sample)) {
    if (!Array.isArray(actual) || actual.length !== sample.length) return at || '/';
    for (const [i, item] of sample.entries()) {
      const bad = misfit(actual[i], item, `${at}/${i}`);
      if (bad) return bad;
    }
    return null;
  }
  if (sample && typeof sample === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return at || '/';
    const open = '…' in sample;
    const keys = Object.keys(sample).filter((k) => k !== '…');
    if (!open && Object.keys(actual).sort().join() !== keys.sort().join()) return `${at}/{${Object.keys(actual).join(',')}}`;
    for (const key of keys) {
      const bad = misfit((actual as Record<string, unknown>)[key], (sample as Record<string, unknown>)[key], `${at}/${key}`);
      if (bad) return bad;
    }
    return null;
  }
  return Object.is(actual, sample) ? null : at || '/';
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-readme-'));
let instance: ReturnType<typeof startProcess>;
let url: string;
beforeAll(async () => {
  instance = startProcess(
    ['start'],
    {
      LOOKOUT_DATA_DIR: dataDir,
      LOOKOUT_CACHE_DIR: path.join(ROOT, '.cache'),
      PORT: String(await freePort()),
      LOOKOUT_EMBEDDED_REDIS_PORT: String(await freePort()),
      LOOKOUT_EMBEDDED_MONGODB_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      // The walkthrough waits 2 s for issues to be counted and flushed (1 s by default); a shorter flush keeps
      // that wait ample on a loaded CI machine.
      FLUSH_INTERVAL_MS: '200',
    },
    /API listening on (http:\/\/\S+)/,
    // a fresh clone builds the dashboard and the server first
    120_000,
    NPM_START,
  );
  url = (await instance.matched)[1]!;
}, 130_000);

/** The arguments of a process and of its children, one line each. */
function processTree(pid: number): string[] {
  const children = fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        // the parent's pid is the fourth field, after the name in parentheses
        return Number(fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === pid;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
  const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  return [args, ...children.flatMap(processTree)];
}

it('npm start runs the compiled server: no tsx in its processes, the worker from the bundle', () => {
  const tree = processTree(instance.child.pid!);
  expect(tree.filter((args) => args.includes('tsx'))).toEqual([]);
  expect(tree.some((args) => args.endsWith('dist/server/lookout.mjs worker'))).toBe(true);
});
afterAll(async () => {
  await instance?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('README "First requests"', () => {
  const steps = walkthrough(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'), 'First requests');

  it('has the walkthrough the issue asks for', () => {
    const all = steps.map((s) => s.command).join('\n');
    for (const part of ['org create', 'project create', '/sdk/activate', '/sdk/config', '/sdk/contacts', '/sessions', 'login_failed', 'exception', '/issues?', '/status', '/releases', 'X-Service-Key', 'X-Service-Instance']) {
      expect(all).toContain(part);
    }
    expect(all).toContain(README_URL);
  });

  it('runs as written against a fresh instance, each answer as shown', async () => {
    const marker = (i: number) => `@@step ${i}@@`;
    const script = ['set -euo pipefail', ...steps.map((s, i) => `${s.command.replaceAll(README_URL, url)}\necho; echo '${marker(i)}'`)].join('\n');
    const outputs = await runCommand('bash', ['-c', script], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOOKOUT_DATA_DIR: dataDir },
    });
    expect(outputs.code, outputs.stderr).toBe(0);
    let rest = outputs.stdout;
    for (const [i, step] of steps.entries()) {
      const at = rest.indexOf(marker(i));
      const printed = rest.slice(0, at).trim();
      rest = rest.slice(at + marker(i).length);
      if (step.answer === undefined) continue;
      const answer = JSON.parse(printed);
      expect(misfit(answer, step.answer), `step ${i + 1}: ${step.command}\nprinted: ${printed}`).toBeNull();
    }
  }, 60_000);
});
