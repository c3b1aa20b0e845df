/**
 * Uptime probes (issue 68), as pure functions: a probe's configuration read from what a person sends, what one
 * check's answer means (up, or down and why), and the state a probe's checks move: down after `failure_threshold`
 * failed checks in a row, up again after `recovery_threshold` good ones (Sentry's defaults, 3 and 1), and an https
 * certificate warned 14 and 3 days before it expires. src/services/probes.service.ts runs the checks.
 */
import type { IncidentChange } from './incidents.ts';

export interface ProbeConfig {
  url: string;
  method: 'GET' | 'HEAD';
  /** the statuses that mean up: ranges such as {from: 200, to: 399} (objects: FerretDB keeps no nested arrays) */
  expect_status: { from: number; to: number }[];
  /** up only if the answer's first 64 KiB hold this text */
  keyword: string | null;
  timeout_s: number;
  interval_min: number;
  /** redirects followed, each to an address checked as the first */
  max_redirects: number;
  failure_threshold: number;
  recovery_threshold: number;
  /** https: the certificate is not verified (a self-signed site); its expiry is still read */
  insecure_tls: boolean;
}

export const PROBE_DEFAULTS: Omit<ProbeConfig, 'url'> = {
  method: 'GET',
  expect_status: [{ from: 200, to: 399 }],
  keyword: null,
  timeout_s: 10,
  interval_min: 5,
  max_redirects: 5,
  failure_threshold: 3,
  recovery_threshold: 1,
  insecure_tls: false,
};

export class ProbeInputError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
  }
}

const whole = (raw: unknown, path: string, min: number, max: number): number => {
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > max) throw new ProbeInputError(path, `must be a whole number from ${min} to ${max}`);
  return raw;
};

/** A probe's configuration from `{url, method?, expect_status?, keyword?, ...}`; a bad field names itself. */
export function readProbeConfig(raw: unknown): ProbeConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ProbeInputError('', 'must be a JSON object');
  const b = raw as Record<string, unknown>;
  let url: URL;
  try {
    url = new URL(String(b.url));
  } catch {
    throw new ProbeInputError('/url', 'must be an http or https URL');
  }
  if (typeof b.url !== 'string' || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new ProbeInputError('/url', 'must be an http or https URL');
  if (url.username || url.password) throw new ProbeInputError('/url', 'may not carry a user name or password');
  const out: ProbeConfig = { ...PROBE_DEFAULTS, url: url.href };
  if (b.method !== undefined) {
    if (b.method !== 'GET' && b.method !== 'HEAD') throw new ProbeInputError('/method', 'must be GET or HEAD');
    out.method = b.method;
  }
  if (b.expect_status !== undefined) {
    if (typeof b.expect_status !== 'string' || !/^\d{3}(-\d{3})?(,\d{3}(-\d{3})?)*$/.test(b.expect_status.replace(/\s/g, ''))) {
      throw new ProbeInputError('/expect_status', 'must list statuses and ranges, such as 200-299,301');
    }
    out.expect_status = b.expect_status
      .replace(/\s/g, '')
      .split(',')
      .map((part) => {
        const [from, to = from] = part.split('-').map(Number) as [number, number?];
        if (from > to!) throw new ProbeInputError('/expect_status', `${part} is not a range`);
        return { from, to: to! };
      });
  }
  if (b.keyword !== undefined && b.keyword !== null) {
    if (typeof b.keyword !== 'string' || b.keyword === '' || b.keyword.length > 256) throw new ProbeInputError('/keyword', 'must be a text of 1 to 256 characters');
    out.keyword = b.keyword;
  }
  if (b.timeout_s !== undefined) out.timeout_s = whole(b.timeout_s, '/timeout_s', 1, 30);
  if (b.interval_min !== undefined) out.interval_min = whole(b.interval_min, '/interval_min', 1, 60);
  if (b.max_redirects !== undefined) out.max_redirects = whole(b.max_redirects, '/max_redirects', 0, 10);
  if (b.failure_threshold !== undefined) out.failure_threshold = whole(b.failure_threshold, '/failure_threshold', 1, 20);
  if (b.recovery_threshold !== undefined) out.recovery_threshold = whole(b.recovery_threshold, '/recovery_threshold', 1, 20);
  if (b.insecure_tls !== undefined) {
    if (typeof b.insecure_tls !== 'boolean') throw new ProbeInputError('/insecure_tls', 'must be true or false');
    out.insecure_tls = b.insecure_tls;
  }
  return out;
}

/** One check's outcome: up, or down with why (`status_500`, `keyword_missing`, `timeout`, `refused: <rule>`, ...). */
export interface CheckResult {
  at: number;
  /** when the check was due (its schedule's time: `at` less this is how late it ran) */
  due: number;
  ok: boolean;
  reason: string | null;
  status: number | null;
  latency_ms: number;
  /** an https answer's certificate expiry (ms) */
  cert_expires: number | null;
}

/** Whether an answer is up by the probe's statuses and keyword. */
export function judgeAnswer(config: ProbeConfig, status: number, body: string): { ok: boolean; reason: string | null } {
  if (!config.expect_status.some(({ from, to }) => status >= from && status <= to)) return { ok: false, reason: `status_${status}` };
  if (config.keyword !== null && !body.includes(config.keyword)) return { ok: false, reason: 'keyword_missing' };
  return { ok: true, reason: null };
}

export interface ProbeState {
  status: 'new' | 'up' | 'down';
  failures_in_row: number;
  oks_in_row: number;
  /** when the open downtime began */
  down_since: number | null;
  /** the certificate expiry last warned of, and at how many days (14, then 3) */
  cert_warned: { expires: number; days: number } | null;
}

export const NEW_PROBE: ProbeState = { status: 'new', failures_in_row: 0, oks_in_row: 0, down_since: null, cert_warned: null };

export type ProbeEffect =
  | { kind: 'down'; at: number; reason: string }
  | { kind: 'still_down'; at: number; reason: string }
  | { kind: 'up'; at: number; since: number }
  | { kind: 'certificate'; at: number; expires: number; days: number };

/** The days before expiry a certificate is warned at, most first. */
export const CERT_WARN_DAYS = [14, 3] as const;
const DAY = 86_400_000;

/** A confirmed check (a failure was checked twice) moves the probe's state. */
export function applyCheck(state: ProbeState, config: ProbeConfig, r: CheckResult): { state: ProbeState; effects: ProbeEffect[] } {
  const effects: ProbeEffect[] = [];
  let s = state;
  if (r.ok) {
    const oks = s.oks_in_row + 1;
    s = { ...s, oks_in_row: oks, failures_in_row: 0 };
    if (s.status !== 'down') s = { ...s, status: 'up' };
    else if (oks >= config.recovery_threshold) {
      effects.push({ kind: 'up', at: r.at, since: s.down_since! });
      s = { ...s, status: 'up', down_since: null };
    }
  } else {
    const fails = s.failures_in_row + 1;
    s = { ...s, failures_in_row: fails, oks_in_row: 0 };
    if (s.status === 'down') effects.push({ kind: 'still_down', at: r.at, reason: r.reason ?? 'down' });
    else if (fails >= config.failure_threshold) {
      effects.push({ kind: 'down', at: r.at, reason: r.reason ?? 'down' });
      s = { ...s, status: 'down', down_since: r.at };
    }
  }
  if (r.cert_expires !== null) {
    const left = r.cert_expires - r.at;
    const due = CERT_WARN_DAYS.filter((d) => left <= d * DAY).at(-1);
    const warned = s.cert_warned?.expires === r.cert_expires ? s.cert_warned.days : Infinity;
    if (due !== undefined && due < warned) {
      effects.push({ kind: 'certificate', at: r.at, expires: r.cert_expires, days: due });
      s = { ...s, cert_warned: { expires: r.cert_expires, days: due } };
    }
  }
  return { state: s, effects };
}

/** What a probe's effect does to its issues: "Downtime: <url>" (one per probe), "Certificate expiring: <host>" (one per certificate). */
export function probeIncident(config: ProbeConfig, effect: ProbeEffect): IncidentChange {
  if (effect.kind === 'certificate') {
    const host = new URL(config.url).host;
    return {
      kind: 'uptime',
      fingerprint: `certificate:${host}:${effect.expires}`,
      title: `Certificate expiring: ${host}`,
      culprit: `expires ${new Date(effect.expires).toISOString()}`,
      level: effect.days <= 3 ? 'error' : 'warning',
      environment: null,
      change: 'occurred',
      id: `cert:${effect.days}`,
      at: effect.at,
      trigger: { event: 'certificate.expiring', url: config.url, host, expires: new Date(effect.expires).toISOString(), days: effect.days },
    };
  }
  const base = { kind: 'uptime' as const, fingerprint: `uptime:${config.url}`, title: `Downtime: ${config.url}`, level: 'error' as const, environment: null, at: effect.at };
  if (effect.kind === 'up') {
    return { ...base, culprit: 'up again', change: 'recovered', id: `up:${effect.since}`, trigger: { event: 'uptime.up', url: config.url, since: new Date(effect.since).toISOString() } };
  }
  return {
    ...base,
    culprit: effect.reason,
    change: 'occurred',
    id: `down:${effect.at}`,
    trigger: effect.kind === 'down' ? { event: 'uptime.down', url: config.url, reason: effect.reason } : null,
  };
}
