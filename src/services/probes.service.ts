/**
 * Uptime probes (issue 68): made, listed and removed by a person, and checked by the workers. Each worker turns
 * `runDue` every second: it claims the probes due (src/state/probes.state.ts), checks each (a failure is checked
 * again a moment later before it counts), keeps the result, moves the probe's state (src/domain/probes.ts), records
 * what that changed in the probe's issues (src/services/incidents.service.ts) and schedules the next check from the
 * time this one was due, so the schedule does not drift. A probe is an outbound request to a URL a person chose:
 * it goes through the webhooks' guard (src/notify/outbound.ts), every address judged at connect time, on every
 * redirect, inward ones only with PROBE_ALLOW_PRIVATE=true.
 */
import { applyCheck, judgeAnswer, probeIncident, ProbeInputError, readProbeConfig, type CheckResult, type ProbeConfig } from '../domain/probes.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { RefusedTargetError } from '../notify/channels.service.ts';
import type { Logger } from '../log.ts';
import { checkedRequest, checkHost, checkUrlForm, TargetRefused } from '../notify/outbound.ts';
import type { ProbesState } from '../state/probes.state.ts';
import type { ProbesStore } from '../store/probes.store.ts';
import { makeTicker } from '../util/ticker.ts';
import type { IncidentsService } from './incidents.service.ts';

const SETTING = 'PROBE_ALLOW_PRIVATE';
/** The most of an answer read (for a keyword). */
const READ_BYTES = 64 * 1024;
/** How long a failed check waits before it is checked again to confirm. */
const CONFIRM_AFTER_MS = 1000;
/** Probes checked at once by one worker, and claimed a turn. */
const AT_ONCE = 50;
const MINUTE = 60_000;
/** The first check of a new probe is due within this long (spread at random). */
const FIRST_SPREAD_MS = 10_000;
/** How long results are kept. */
const RESULTS_KEPT_MS = 30 * 24 * 3_600_000;

export interface ProbesDeps {
  store: ProbesStore;
  state: ProbesState;
  incidents?: IncidentsService;
  allowPrivate: boolean;
  log: Logger;
}

/** One request of a check, following redirects up to the probe's limit; its status, body and certificate. */
async function fetchFollowing(config: ProbeConfig, allowPrivate: boolean, signal: AbortSignal) {
  let url = config.url;
  for (let hops = 0; ; hops++) {
    const answer = await checkedRequest(url, {
      method: config.method,
      headers: { 'user-agent': 'Lookout-Uptime/1.0', accept: '*/*' },
      signal,
      allowPrivate,
      setting: SETTING,
      readBytes: READ_BYTES,
      insecureTls: config.insecure_tls,
    });
    const location = answer.headers.location;
    if (answer.status >= 300 && answer.status < 400 && location && hops < config.max_redirects) {
      url = new URL(location, url).href;
      continue;
    }
    return answer;
  }
}

/** One check of a probe, as it is now. */
export async function checkOnce(config: ProbeConfig, allowPrivate: boolean, at = Date.now(), due = at): Promise<CheckResult> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  try {
    const answer = await fetchFollowing(config, allowPrivate, AbortSignal.timeout(config.timeout_s * 1000));
    const { ok, reason } = judgeAnswer(config, answer.status, answer.body.toString('utf8'));
    return { at, due, ok, reason, status: answer.status, latency_ms: latency(), cert_expires: answer.certificate?.valid_to ?? null };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const reason = err instanceof TargetRefused ? `refused: ${err.message}` : e.name === 'TimeoutError' || e.name === 'AbortError' ? 'timeout' : (e.code ?? e.message);
    return { at, due, ok: false, reason, status: null, latency_ms: latency(), cert_expires: null };
  }
}

export function makeProbesService(deps: ProbesDeps) {
  const { store, state, log } = deps;

  async function found(project: number, id: number) {
    const probe = await store.get(project, id);
    if (!probe) throw new NotFoundError('probe_not_found', `project ${project} has no probe ${id}`);
    return probe;
  }

  /** Checks one claimed probe: confirmed, kept, applied, and scheduled again. */
  async function run(project: number, id: number, due: number, now: number): Promise<void> {
    const probe = await store.get(project, id);
    if (!probe) return state.forget({ project, id });
    let result = await checkOnce(probe.config, deps.allowPrivate, now, due);
    if (!result.ok) {
      await new Promise((r) => setTimeout(r, CONFIRM_AFTER_MS));
      result = await checkOnce(probe.config, deps.allowPrivate, now, due);
    }
    await store.saveResult(project, id, result);
    const moved = applyCheck(await state.read({ project, id }), probe.config, result);
    for (const effect of moved.effects) await deps.incidents?.record(project, probeIncident(probe.config, effect), new Date(now));
    await state.save({ project, id }, moved.state);
    // the next check from when this one was due; one far behind (the workers were down) starts again from now
    const every = probe.config.interval_min * MINUTE;
    const next = due + every > now ? due + every : now + every;
    await state.schedule({ project, id }, next);
    if (result.at % (60 * MINUTE) < every) await store.forgetResults(project, id, now - RESULTS_KEPT_MS);
  }

  return {
    checkOnce,
    /** Adds a probe; its URL's form, and where it leads now, are checked first (a refusal names the rule). */
    async add(project: number, body: unknown, now: Date) {
      let config: ProbeConfig;
      try {
        config = readProbeConfig(body);
      } catch (err) {
        if (err instanceof ProbeInputError) throw new BadRequestError('invalid_probe', err.message, { errors: [{ path: err.path, message: err.message }] });
        throw err;
      }
      try {
        await checkHost(checkUrlForm(config.url).hostname, deps.allowPrivate, SETTING);
      } catch (err) {
        if (err instanceof TargetRefused) throw new RefusedTargetError(err.rule, err.message);
        throw err;
      }
      const doc = await store.add(project, config, now);
      // the first check within a few seconds, spread so that probes added together are not all due at once
      await state.schedule({ project, id: doc.id }, now.getTime() + Math.floor(Math.random() * Math.min(config.interval_min * MINUTE, FIRST_SPREAD_MS)));
      return { id: String(doc.id), ...config, state: await state.read({ project, id: doc.id }) };
    },
    async list(project: number) {
      const probes = await store.ofProject(project);
      return { probes: await Promise.all(probes.map(async (p) => ({ id: String(p.id), ...p.config, state: await state.read({ project, id: p.id }) }))) };
    },
    /** A probe with its results of the last `days` and its uptime over 24 hours, 7 and 30 days. */
    async show(project: number, id: number, now: Date) {
      const probe = await found(project, id);
      const results = await store.results(project, id, now.getTime() - 30 * 24 * 3_600_000);
      const uptime = (ms: number) => {
        const within = results.filter((r) => r.at >= now.getTime() - ms);
        return within.length ? within.filter((r) => r.ok).length / within.length : null;
      };
      return {
        id: String(id),
        ...probe.config,
        state: await state.read({ project, id }),
        uptime: { day: uptime(24 * 3_600_000), week: uptime(7 * 24 * 3_600_000), month: uptime(30 * 24 * 3_600_000) },
        results: results.slice(-500).map(({ _id, project_id, probe: _p, ...r }) => r),
      };
    },
    async remove(project: number, id: number) {
      await found(project, id);
      await state.forget({ project, id });
      await store.remove(project, id);
      return { removed: String(id) };
    },
    /** Checks the probes due by `now` (ms) that no other worker claimed; how many. */
    async runDue(now: number): Promise<number> {
      const claimed = await state.claimDue(now, AT_ONCE);
      await Promise.all(
        claimed.map(async (c) => {
          try {
            await run(c.project, c.id, c.due, now);
          } catch (err) {
            log.warn({ project: c.project, probe: c.id, err: (err as Error).message }, 'a probe could not be checked; it is tried again in a minute');
            await state.schedule(c, now + MINUTE).catch(() => {});
          } finally {
            await c.lease.end();
          }
        }),
      );
      return claimed.length;
    },
    /** Turns `runDue` every `everyMs` until stopped (the workers serving `events`); one turn at a time. */
    start(everyMs = 1000): { stop(): Promise<void> } {
      const ticker = makeTicker(
        async () => void (await this.runDue(Date.now())),
        (err) => log.warn({ err: err.message }, 'the probes could not be checked; they are tried again'),
        everyMs,
      );
      ticker.start();
      return ticker;
    },
  };
}
export type ProbesService = ReturnType<typeof makeProbesService>;
