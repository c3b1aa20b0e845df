/**
 * Notification channels of a project, for the admin CLI (`lookout admin
 * notify …`) and the dashboard's Alerts page alike: add (the signing secret
 * shown once), list, remove, test, resume a paused one, rotate the secret,
 * and the deliveries log.
 */
import crypto from 'node:crypto';
import type { Config } from '../../config/index.ts';
import { DEFAULT_CRASH_FREE, DEFAULT_FREQUENCY, DEFAULT_PERFORMANCE, DEFAULT_TRIGGERS, type NoticeBody, type Trigger } from '../domain/notifications.ts';
import { AppError, BadRequestError, NotFoundError } from '../errors.ts';
import { checkHost, checkUrlForm, TargetRefused } from './outbound.ts';
import type { Queues } from '../queues/registry.ts';
import type { NotifyState } from './notify.state.ts';
import type { ChannelDoc } from '../store/channels.store.ts';
import type { Stores } from '../store/index.ts';
import type { Validator } from '../validation/validator.ts';

/** What adds a channel (schemas/channel.json). */
export interface ChannelInput {
  webhook?: string;
  email?: string;
  format?: 'json' | 'slack';
  on?: Trigger[];
  environment?: string | null;
  level?: string | null;
  frequency?: Partial<ChannelDoc['frequency']>;
  crash_free?: Partial<ChannelDoc['crash_free']>;
  performance?: Partial<ChannelDoc['performance']>;
}

/** A target outside the outbound rules (or email without SMTP): 422, naming the rule. */
export class RefusedTargetError extends AppError {
  constructor(rule: string, message: string) {
    super(422, 'target_refused', message, { rule });
  }
}

/** How many deliveries the log answers at most. */
const DELIVERIES_SHOWN = 200;

/** A channel as listed: never its secret; a member sees only a webhook's origin (the path of a chat hook is a credential). */
export function channelView(doc: ChannelDoc, opts: { fullUrl: boolean }) {
  const url = doc.url && !opts.fullUrl ? `${new URL(doc.url).origin}/…` : doc.url;
  return {
    id: String(doc._id),
    kind: doc.kind,
    ...(doc.kind === 'webhook' ? { url, format: doc.format } : { email: doc.email }),
    on: doc.on,
    environment: doc.environment,
    level: doc.level,
    frequency: doc.frequency,
    crash_free: doc.crash_free,
    // channels made before issue 69 have no performance rule stored: they show the defaults
    performance: { ...DEFAULT_PERFORMANCE, ...doc.performance },
    paused: doc.paused_at !== null,
    paused_at: doc.paused_at?.toISOString() ?? null,
    created_at: doc.created_at.toISOString(),
  };
}

export function makeNotifyService(deps: {
  stores: Stores;
  notify: NotifyState;
  queues: Queues;
  validator: Validator;
  config: Pick<Config, 'smtpUrl' | 'webhookAllowPrivate'>;
}) {
  const { stores, notify } = deps;
  const projectOf = async (id: number) => {
    const doc = await stores.projects.get(id);
    if (!doc) throw new NotFoundError('project_not_found', `no project ${id}`);
    return doc;
  };
  const channelOf = async (project: number, id: number) => {
    const doc = await stores.channels.get(id);
    if (!doc || doc.project_id !== project) throw new NotFoundError('channel_not_found', `no channel ${id} in project ${project}`);
    return doc;
  };
  const newSecret = () => `whsec_${crypto.randomBytes(24).toString('base64url')}`;

  return {
    /** Adds a channel after checking its target; a webhook's answer carries its signing secret, shown only here. */
    async add(project: number, raw: unknown) {
      const input = deps.validator.check<ChannelInput>('channel', raw);
      await projectOf(project);
      if (input.webhook !== undefined) {
        try {
          await checkHost(checkUrlForm(input.webhook).hostname, deps.config.webhookAllowPrivate);
        } catch (err) {
          if (err instanceof TargetRefused) throw new RefusedTargetError(err.rule, err.message);
          throw err;
        }
      } else if (!deps.config.smtpUrl) {
        throw new RefusedTargetError('smtp', 'email channels need an SMTP server: set SMTP_URL (and MAIL_FROM) for the API and workers');
      }
      const doc = await stores.channels.create({
        project_id: project,
        kind: input.webhook !== undefined ? 'webhook' : 'email',
        url: input.webhook ?? null,
        email: input.email ?? null,
        format: input.format ?? 'json',
        secret: input.webhook !== undefined ? newSecret() : null,
        on: input.on ?? [...DEFAULT_TRIGGERS],
        environment: input.environment ?? null,
        level: input.level ?? null,
        frequency: { ...DEFAULT_FREQUENCY, ...input.frequency },
        crash_free: { ...DEFAULT_CRASH_FREE, ...input.crash_free },
        performance: { ...DEFAULT_PERFORMANCE, ...input.performance },
        paused_at: null,
        created_at: new Date(),
      });
      return { ...channelView(doc, { fullUrl: true }), ...(doc.secret ? { secret: doc.secret } : {}) };
    },
    async list(project: number, opts = { fullUrl: true }) {
      await projectOf(project);
      const docs = await stores.channels.ofProject(project);
      const failures = await notify.failures(
        project,
        docs.map((c) => c._id),
      );
      return { channels: docs.map((c, i) => ({ ...channelView(c, opts), failures_in_a_row: failures[i]! })) };
    },
    async remove(project: number, channel: number) {
      await channelOf(project, channel);
      await stores.channels.remove(project, channel);
      return { removed: String(channel) };
    },
    /** A new signing secret, shown only here; deliveries signed from now on use it. */
    async rotateSecret(project: number, channel: number) {
      const doc = await channelOf(project, channel);
      if (doc.kind !== 'webhook') throw new BadRequestError('not_a_webhook', 'only a webhook channel has a signing secret');
      const secret = newSecret();
      await stores.channels.update(channel, { secret });
      return { id: String(channel), secret };
    },
    async resume(project: number, channel: number) {
      await channelOf(project, channel);
      await notify.succeeded(project, channel);
      return channelView((await stores.channels.update(channel, { paused_at: null }))!, { fullUrl: true });
    },
    /** Sends a `test` notification through the queue, as any other; answers its delivery id. */
    async test(project: number, channel: number, now = new Date()) {
      const [doc, p] = [await channelOf(project, channel), await projectOf(project)];
      const delivery = `n${project}-t${channel}-${now.getTime()}`;
      const body: NoticeBody = {
        event: 'test',
        delivery,
        triggered_at: now.toISOString(),
        project: { id: String(project), name: p.name },
        message: 'A test notification from Lookout: this channel is reached.',
      };
      await notify.openDelivery(project, { id: delivery, channel: doc._id, event: 'test', status: 'queued' }, now);
      await deps.queues.enqueue('notify.deliver', { project, channel, delivery, event: 'test', body }, delivery);
      return { delivery, channel: String(channel), status: 'queued' };
    },
    async deliveries(project: number, opts: { channel?: number; limit?: number } = {}) {
      await projectOf(project);
      return { deliveries: await notify.deliveries(project, Math.min(opts.limit ?? DELIVERIES_SHOWN, DELIVERIES_SHOWN), opts.channel) };
    },
  };
}
export type NotifyService = ReturnType<typeof makeNotifyService>;
