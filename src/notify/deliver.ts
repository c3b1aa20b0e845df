/**
 * One attempt at one delivery of a `notify.deliver` job (src/queues/jobs/notify-deliver.job.ts; the dispatcher
 * enqueued it under its delivery id). A digest is closed first, once, so every attempt sends the same one. The
 * attempt is recorded in the deliveries log; a failure is thrown for BullMQ to retry with backoff
 * (src/queues/registry.ts), and the last failure marks the delivery failed and counts against the channel: ten failed
 * deliveries in a row pause it.
 */
import { UnrecoverableError, type Job } from 'bullmq';
import type { Config } from '../../config/index.ts';
import { channelLabel, digestBody, NOISE, type NoticeBody } from '../domain/notifications.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { NotifyDeliverPayload } from '../queues/jobs/notify-deliver.job.ts';
import { sendNotice } from './send.ts';
import type { NotifyState } from './notify.state.ts';
import type { Stores } from '../store/index.ts';

/** Failed deliveries in a row that pause a channel. */
const PAUSE_AFTER_FAILURES = 10;

/** What the handler uses, and nothing else. */
export interface NotifyDeliverDeps {
  notify: NotifyState;
  stores: Pick<Stores, 'channels' | 'activity'>;
  config: Pick<Config, 'publicUrl' | 'webhookAllowPrivate' | 'smtpUrl' | 'mailFrom'>;
  log: Logger;
  metrics: Metrics;
}

export async function deliverNotification(payload: NotifyDeliverPayload, runtime: NotifyDeliverDeps, job: Job, now = new Date()) {
  const { notify, stores, config, log } = runtime;
  const { project, delivery } = payload;
  const channel = await stores.channels.get(payload.channel);
  if (!channel || channel.project_id !== project) {
    await notify.setStatus(project, delivery, 'dropped');
    return { delivery, status: 'dropped' };
  }
  if (channel.paused_at && payload.event !== 'test') {
    await notify.setStatus(project, delivery, 'paused');
    return { delivery, status: 'paused' };
  }
  let body: NoticeBody;
  if (payload.event === 'digest') {
    const taken = await notify.takeDigest(project, channel._id, delivery, now, NOISE.windowMs);
    if (!taken) {
      await notify.setStatus(project, delivery, 'dropped');
      log.warn({ project, delivery }, 'a digest was lost with the Redis state that held it');
      return { delivery, status: 'dropped' };
    }
    const ref = { id: String(project), name: payload.project_name ?? `project ${project}` };
    body = digestBody(
      delivery,
      now,
      ref,
      taken.bodies.map((b) => JSON.parse(b) as NoticeBody),
      taken.count,
    );
  } else {
    body = payload.body!;
  }

  const outcome = await sendNotice(
    channel,
    body,
    { publicUrl: config.publicUrl, allowPrivate: config.webhookAllowPrivate, smtpUrl: config.smtpUrl, mailFrom: config.mailFrom },
    now,
  );
  const { ok, refused, ...attempt } = outcome;
  const last = refused || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  const status = ok ? 'delivered' : last ? 'failed' : 'retrying';
  // BullMQ's exponential backoff (src/queues/registry.ts): the base delay doubled for each attempt made
  const backoff = job.opts.backoff;
  const delay = typeof backoff === 'object' && backoff.type === 'exponential' ? (backoff.delay ?? 0) * 2 ** job.attemptsMade : null;
  await notify.recordAttempt(project, delivery, attempt, status, status === 'retrying' && delay !== null ? new Date(now.getTime() + delay) : null);
  runtime.metrics.notifications.inc({ event: body.event, outcome: refused ? 'refused' : status });
  if (ok) {
    runtime.metrics.notificationDelay.observe((Date.now() - Date.parse(body.triggered_at)) / 1000);
    await notify.succeeded(project, channel._id);
    // the issue's activity names what it was told of, and where (a retry after this step writes it again)
    if (body.issue) {
      await stores.activity.add(project, Number(body.issue.id), { at: now, kind: 'notified', by: null, data: { event: body.event, channel: channelLabel(channel), delivery } });
    }
    return { delivery, status: 'delivered' };
  }
  if (last && (await notify.failedInARow(project, channel._id)) >= PAUSE_AFTER_FAILURES && payload.event !== 'test') {
    await stores.channels.update(channel._id, { paused_at: now });
    log.warn({ project, channel: channel._id }, `a notification channel failed ${PAUSE_AFTER_FAILURES} deliveries in a row and is paused`);
  }
  if (refused) throw new UnrecoverableError(attempt.error ?? 'refused');
  throw new Error(attempt.error ?? 'delivery failed');
}
