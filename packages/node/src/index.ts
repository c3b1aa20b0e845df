/**
 * @lookout/node: the client an installation (a module of a business
 * platform) uses to report to Lookout.
 *
 *   const lookout = createClient({ baseUrl, secretKey, instanceId, release });
 *   await lookout.activate({ platform: 'odoo' });
 *   lookout.signInAttempt({ kind: 'login_failed', actor: 'ada@example.com', ip });
 *   lookout.captureException(err);
 *   await lookout.close();
 */
import { EventEmitter } from 'node:events';
import type { Activation as ApiActivation, ContactsBody, SdkConfig, SeatsUsed } from './api-types.js';
import { makeDecisionCopy, type Decision, type DecisionsFeed } from './decisions.js';
import { errorEvent, signInEvent, type EventBase, type Level, type SignInAttempt } from './events.js';
import { makeSessions, type Session } from './sessions.js';
import { makeTransport, type TransportStats } from './transport.js';

export { InstanceBoundElsewhereError, LookoutError, ProjectHasInstanceError, SeatsExceededError } from './errors.js';
export type { SignInAttempt, SignInKind, Level } from './events.js';
export type { Session, SessionStatus } from './sessions.js';
export type { Decision } from './decisions.js';
export type { TransportStats } from './transport.js';

export const SDK_NAME = '@lookout/node';
export const SDK_VERSION = '0.1.0';

export interface ClientOptions {
  /** where Lookout answers, e.g. https://lookout.example.com */
  baseUrl: string;
  /** the project's secret key (lk_sk_…) */
  secretKey: string;
  /** this installation's stable id, 8 to 128 characters */
  instanceId: string;
  /** the project's public key; learnt from activate/config when absent (sessions need it) */
  publicKey?: string;
  release?: string;
  environment?: string;
  /** `sessions` (default) sends each session; `aggregate` sends per-minute counts, for servers */
  sessionMode?: 'sessions' | 'aggregate';
  /** how often the config is polled once activated (default 10 minutes, ±10% jitter) */
  pollIntervalMs?: number;
  /** how often the decisions feed is polled once activated (default 10 s; 0: never) */
  decisionsPollSeconds?: number;
  /** how often session changes are sent (default 1 s; aggregates 60 s) */
  sessionFlushMs?: number;
  /** retries of one request on network errors, 5xx and 429 (default 6) */
  maxRetries?: number;
  /** most background sends waiting before new ones are dropped (default 1,000) */
  queueSize?: number;
}

export interface ActivateOptions {
  baseUrl?: string;
  platform?: string;
  platformVersion?: string;
  termsVersion?: string;
  acceptedBy?: string;
}

/** What the API answers and takes, generated from its schemas (src/api-types.ts, `npm run contracts`). */
export type Activation = ApiActivation;
export type Config = SdkConfig;
export type Features = SdkConfig['features'];
export type Company = ContactsBody['companies'][number];

export interface Stats extends TransportStats {
  /** events handed to the client */
  events: number;
}

export function createClient(options: ClientOptions) {
  for (const key of ['baseUrl', 'secretKey', 'instanceId'] as const) {
    if (typeof options[key] !== 'string' || options[key] === '') throw new TypeError(`createClient: ${key} is required`);
  }
  const emitter = new EventEmitter();
  const transport = makeTransport({
    baseUrl: options.baseUrl,
    maxRetries: options.maxRetries,
    queueSize: options.queueSize,
    userAgent: `${SDK_NAME}/${SDK_VERSION}`,
  });
  const secretHeaders = { 'x-service-key': options.secretKey, 'x-service-instance': options.instanceId };
  const eventBase: EventBase = { sdk: { name: SDK_NAME, version: SDK_VERSION }, release: options.release, environment: options.environment };
  let publicKey = options.publicKey;
  let lastConfig: string | null = null;
  let pollTimer: NodeJS.Timeout | null = null;
  let decisionsTimer: NodeJS.Timeout | null = null;
  const decisions = makeDecisionCopy();
  let closed = false;
  let events = 0;

  const sessions = makeSessions({
    mode: options.sessionMode ?? 'sessions',
    release: options.release,
    environment: options.environment,
    send: (body) =>
      transport.enqueue(() => transport.request('POST', '/api/v1/sessions', body, { 'x-service-key': publicKey! })),
  });
  const sessionFlushMs = options.sessionFlushMs ?? (options.sessionMode === 'aggregate' ? 60_000 : 1000);
  const sessionTimer = setInterval(() => flushSessions(), sessionFlushMs);
  sessionTimer.unref();

  function flushSessions(): void {
    if (publicKey) sessions.flush(); // without the public key the changes wait for activate or config
  }

  /** Records a config answer; 'config' fires when plan, seats, features, enabled or the public key changed. */
  function noteConfig(config: Config): void {
    publicKey = config.public_key;
    const seen = JSON.stringify({ public_key: config.public_key, enabled: config.enabled, features: config.features });
    if (seen !== lastConfig) {
      const first = lastConfig === null;
      lastConfig = seen;
      if (!first) emitter.emit('config', config);
    }
  }

  function schedulePoll(): void {
    if (closed || pollTimer) return;
    const interval = options.pollIntervalMs ?? 600_000;
    pollTimer = setTimeout(async () => {
      pollTimer = null;
      await client.config().catch(() => {}); // a failed poll is tried again at the next interval
      schedulePoll();
    }, interval * (0.9 + Math.random() * 0.2));
    pollTimer.unref();
  }

  /** Reads the decisions changed since the last answer (all of them the first time) into the local copy. */
  async function pollDecisions(): Promise<void> {
    const since = decisions.cursor();
    const answer = await transport.request<DecisionsFeed>('GET', `/api/v1/sdk/decisions${since ? `?since=${encodeURIComponent(since)}` : ''}`, undefined, secretHeaders);
    if (decisions.apply(answer)) emitter.emit('decisions', decisions.list());
  }

  function scheduleDecisions(): void {
    const seconds = options.decisionsPollSeconds ?? 10;
    if (closed || decisionsTimer || seconds <= 0) return;
    const run = async () => {
      await pollDecisions().catch(() => {}); // a failed poll keeps the copy and is tried again at the next interval
      if (closed) return;
      decisionsTimer = setTimeout(run, seconds * 1000);
      decisionsTimer.unref();
    };
    decisionsTimer = setTimeout(run, 0);
    decisionsTimer.unref();
  }

  function sendEvent(event: { event_id: string }): string {
    events++;
    transport.enqueue(() => transport.request('POST', '/api/v1/events', event, secretHeaders));
    return event.event_id;
  }

  const client = {
    /** Binds the secret key to this installation; 409s are InstanceBoundElsewhereError / ProjectHasInstanceError. */
    async activate(activate: ActivateOptions = {}): Promise<Activation> {
      const body = {
        instance_id: options.instanceId,
        ...(activate.baseUrl ? { base_url: activate.baseUrl } : {}),
        ...(activate.platform ? { platform: activate.platform } : {}),
        ...(activate.platformVersion ? { platform_version: activate.platformVersion } : {}),
        ...(activate.termsVersion ? { terms_version: activate.termsVersion } : {}),
        ...(activate.acceptedBy ? { accepted_by: activate.acceptedBy } : {}),
      };
      const answer = await transport.request<Activation>('POST', '/api/v1/sdk/activate', body, { 'x-service-key': options.secretKey });
      noteConfig(answer);
      schedulePoll();
      scheduleDecisions();
      return answer;
    },

    /** The current config (also polled every 10 minutes once activated). */
    async config(): Promise<Config> {
      const answer = await transport.request<Config>('GET', '/api/v1/sdk/config', undefined, secretHeaders);
      noteConfig(answer);
      return answer;
    },

    /** Replaces the installation's contacts; SeatsExceededError carries seats, used and plan. */
    setContacts(companies: Company[]): Promise<SeatsUsed> {
      return transport.request('PUT', '/api/v1/sdk/contacts', { companies }, secretHeaders);
    },

    /** One sign-in attempt, sent in the background; returns its event id. A password passed by mistake is dropped. */
    signInAttempt(attempt: SignInAttempt): string {
      return sendEvent(signInEvent(attempt as SignInAttempt & Record<string, unknown>, eventBase));
    },

    /** An error event with its stack trace, sent in the background; returns its event id. */
    captureException(err: unknown, opts: { tags?: Record<string, string | number | boolean>; level?: Level } = {}): string {
      return sendEvent(errorEvent(err, opts, eventBase));
    },

    startSession(opts: { did?: string } = {}): Session {
      return sessions.start(opts);
    },

    /**
     * Whether a decision Lookout made from a sign-in burst names this sign-in
     * (brute force: the actor from the address; credential stuffing: the
     * address). Answered from the local copy, polled in the background once
     * activated; what to do (delay, captcha, refuse) is the caller's choice.
     */
    isBlocked(who: { actor?: string | null; ip?: string | null }): boolean {
      return decisions.isBlocked(who);
    },

    /** The decisions in force, as the last poll saw them. */
    decisions(): Decision[] {
      return decisions.list();
    },

    /**
     * 'config': the plan, seats, features, enabled flag or public key changed (seen by a poll or a call).
     * 'decisions': the decisions in force changed (the new list).
     */
    on: ((event: string, listener: Parameters<typeof emitter.on>[1]) => void emitter.on(event, listener)) as {
      (event: 'config', listener: (config: Config) => void): void;
      (event: 'decisions', listener: (decisions: Decision[]) => void): void;
    },

    stats(): Stats {
      return { ...transport.stats(), events };
    },

    /** Sends session changes and waits until every background send is answered (or given up). */
    async flush(): Promise<void> {
      flushSessions();
      await transport.drain();
    },

    /** Ends open sessions, flushes, stops polling. */
    async close(): Promise<void> {
      closed = true;
      if (pollTimer) clearTimeout(pollTimer);
      if (decisionsTimer) clearTimeout(decisionsTimer);
      clearInterval(sessionTimer);
      sessions.endAll();
      await client.flush();
    },
  };
  return client;
}

export type LookoutClient = ReturnType<typeof createClient>;
