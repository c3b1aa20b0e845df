/**
 * events.process: an error event joins the issue of its fingerprint; a
 * sign-in attempt triggers a recount of its group's bursts. Every step is
 * idempotent (insert-only membership, counters by recount with $max,
 * regression guarded by status and resolve time), so a retry, a duplicate
 * delivery or two workers on the same issue leave the same result. Writes to
 * an issue run under its Redis lock (FerretDB v1 loses concurrent updates).
 */
import crypto from 'node:crypto';
import { detectBruteForce, detectStuffing, type Attempt, type Burst } from '../src/domain/bursts.ts';
import { describeError } from '../src/domain/fingerprint.ts';
import { onNewEvent } from '../src/domain/issue-status.ts';
import type { Runtime } from '../src/runtime.ts';
import { eventKey, type EventDoc } from '../src/store/events.store.ts';
import type { IssueDoc } from '../src/store/issues.store.ts';
import { DEFAULT_ALERTS } from '../src/store/projects.store.ts';

/** How far back a detector reads a group's attempts; bursts chained over longer spans may split. */
const DETECTION_LOOKBACK_MS = 24 * 3600 * 1000;
const DETECTION_MAX_ATTEMPTS = 20_000;

export async function processEvent(id: string, runtime: Runtime, now: Date): Promise<string> {
  const { events } = runtime.stores;
  const event = await events.get(id);
  // A job exists only for an event the API has stored, so a miss means the write is not
  // visible to this connection yet: retry with backoff (after the last attempt the job
  // fails and stays in the failed set for an operator to see).
  if (!event) throw new Error(`event ${id} not found yet`);
  if (event.kind === 'error') await groupError(event, runtime, now);
  else await detectBursts(event, runtime, now);
  await events.markProcessed(id);
  return event.kind;
}

async function groupError(event: EventDoc, runtime: Runtime, now: Date): Promise<void> {
  const { issues, events } = runtime.stores;
  const payload = event.payload as { level?: string; tags?: Record<string, string> };
  const { title, exception_type } = describeError(event.payload);
  const issue = await issues.findOrCreate(
    {
      project_id: event.project_id,
      kind: 'error',
      fingerprint: event.fingerprint!,
      title,
      exception_type,
      level: payload.level ?? 'error',
      first_seen: event.at,
      last_seen: event.at,
      last_release: event.release,
    },
    now,
  );
  await events.attach([{ id: event._id, at: event.at }], issue._id);
  await runtime.lockIssue(issue._id, async () => {
    await issues.followLatest(issue._id, event.at, { last_release: event.release, level: payload.level ?? 'error', title });
    await issues.advance(issue._id, { event_count: await events.countForIssue(issue._id), first_seen: event.at, last_seen: event.at });
    const company = payload.tags?.company;
    if (company) await issues.addCompany(issue._id, company);
    await applyStatus(issue, event, runtime, now);
  });
}

async function applyStatus(issue: IssueDoc, event: EventDoc, runtime: Runtime, now: Date): Promise<void> {
  const current = (await runtime.stores.issues.get(issue.project_id, issue._id)) ?? issue;
  const next = onNewEvent(current, event.release);
  if (next.regression) await runtime.stores.issues.regress(issue._id, event.received_at, next.regression, now);
}

async function detectBursts(event: EventDoc, runtime: Runtime, now: Date): Promise<void> {
  if (event.security_kind !== 'login_failed' && event.security_kind !== 'login_succeeded') return;
  const { events, projects } = runtime.stores;
  const project = await projects.get(event.project_id);
  const settings = { ...DEFAULT_ALERTS, ...project?.alerts };
  const since = new Date(event.at.getTime() - DETECTION_LOOKBACK_MS);
  const toAttempts = (docs: Pick<EventDoc, 'event_id' | 'at' | 'security_kind' | 'actor'>[]): Attempt[] =>
    docs.map((d) => ({ id: d.event_id, at: d.at.getTime(), kind: d.security_kind ?? '', actor: d.actor ?? '' }));

  const read = await events.attempts(event.project_id, event.group_key!, event.ip, since, DETECTION_MAX_ATTEMPTS);
  const group = toAttempts(read.group);
  for (const burst of detectBruteForce(group, settings)) {
    await recordBurst(event, burst, group, 'brute_force', event.group_key!, runtime, now);
  }
  if (event.ip) {
    const fromIp = toAttempts(read.fromIp);
    for (const burst of detectStuffing(fromIp, settings)) {
      await recordBurst(event, burst, fromIp, 'credential_stuffing', event.ip, runtime, now);
    }
  }
}

async function recordBurst(
  event: EventDoc,
  burst: Burst,
  attempts: Attempt[],
  detector: 'brute_force' | 'credential_stuffing',
  groupKey: string,
  runtime: Runtime,
  now: Date,
): Promise<void> {
  const { issues, events } = runtime.stores;
  const digest = crypto.createHash('sha256').update(groupKey).digest('hex').slice(0, 16);
  const [actor, ip] = detector === 'brute_force' ? groupKey.split('|') : [null, groupKey];
  const title =
    detector === 'brute_force'
      ? `Repeated failed sign-ins for ${actor} from ${ip === '-' ? 'an unknown address' : ip}`
      : `Failed sign-ins on many accounts from ${ip}`;
  const issue = await issues.findOrCreate(
    {
      project_id: event.project_id,
      kind: 'security',
      fingerprint: `security:${detector}:${digest}:${burst.key}`,
      title,
      exception_type: detector,
      level: 'warning',
      first_seen: new Date(burst.first_seen),
      last_seen: new Date(burst.last_seen),
      last_release: null,
    },
    now,
  );
  const times = new Map(attempts.map((a) => [a.id, a.at]));
  await events.attach(
    burst.attempt_ids.map((id) => ({ id: eventKey(event.project_id, id), at: new Date(times.get(id)!) })),
    issue._id,
  );
  await runtime.lockIssue(issue._id, async () => {
    await issues.advance(issue._id, {
      event_count: burst.attempt_ids.length,
      first_seen: new Date(burst.first_seen),
      last_seen: new Date(burst.last_seen),
    });
    if (burst.attempt_ids.includes(event.event_id)) await applyStatus(issue, event, runtime, now);
  });
}
