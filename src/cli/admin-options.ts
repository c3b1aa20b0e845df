/** The admin CLI's options (src/cli/admin.ts), and their values read as each command needs them. */
import { UsageError } from './usage.ts';

export const OPTIONS = {
  name: { type: 'string' },
  plan: { type: 'string' },
  seats: { type: 'string' },
  org: { type: 'string' },
  project: { type: 'string' },
  kind: { type: 'string' },
  email: { type: 'string' },
  enabled: { type: 'string' },
  'security-monitoring': { type: 'string' },
  'event-retention-days': { type: 'string' },
  'silent-after-minutes': { type: 'string' },
  threshold: { type: 'string' },
  'window-seconds': { type: 'string' },
  'cooldown-seconds': { type: 'string' },
  'stuffing-threshold': { type: 'string' },
  'decision-seconds': { type: 'string' },
  'decision-mode': { type: 'string' },
  allowlist: { type: 'string' },
  escalate: { type: 'string' },
  'decision-max-seconds': { type: 'string' },
  'brute-force-decision': { type: 'string' },
  'stuffing-decision': { type: 'string' },
  decision: { type: 'string' },
  bouncer: { type: 'string' },
  role: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  scopes: { type: 'string' },
  token: { type: 'string' },
  webhook: { type: 'string' },
  format: { type: 'string' },
  on: { type: 'string' },
  environment: { type: 'string' },
  level: { type: 'string' },
  channel: { type: 'string' },
  'frequency-count': { type: 'string' },
  'frequency-minutes': { type: 'string' },
  'interval-minutes': { type: 'string' },
  'crash-free-below': { type: 'string' },
  'min-sessions': { type: 'string' },
  slug: { type: 'string' },
  schedule: { type: 'string' },
  every: { type: 'string' },
  timezone: { type: 'string' },
  margin: { type: 'string' },
  'max-runtime': { type: 'string' },
  failures: { type: 'string' },
  recoveries: { type: 'string' },
  url: { type: 'string' },
  interval: { type: 'string' },
  'expect-status': { type: 'string' },
  keyword: { type: 'string' },
  probe: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  window: { type: 'string' },
  out: { type: 'string' },
  in: { type: 'string' },
  'without-events': { type: 'boolean' },
  replace: { type: 'boolean' },
} as const;

/** The options that take no value. */
type Flag = 'password-stdin' | 'without-events' | 'replace';
export type Values = Partial<Record<Exclude<keyof typeof OPTIONS, Flag>, string>> & Partial<Record<Flag, boolean>>;

export function need(values: Values, name: Exclude<keyof Values, Flag>): string {
  const value = values[name];
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}
export function id(values: Values, name: 'org' | 'project' | 'channel'): number {
  const text = need(values, name);
  if (!/^[1-9]\d{0,15}$/.test(text)) throw new UsageError(`--${name} must be a numeric id`);
  return Number(text);
}
export function onOff(values: Values, name: 'enabled' | 'security-monitoring' | 'escalate'): boolean | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (value !== 'on' && value !== 'off') throw new UsageError(`--${name} takes on or off`);
  return value === 'on';
}
export function seats(values: Values): number | null | undefined {
  const value = values.seats;
  if (value === undefined) return undefined;
  if (value === 'unlimited') return null;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError('--seats takes a whole number or unlimited');
  return Number(value);
}
/** A whole number; its bounds are the service's to check (schemas/alerts.json), as for the dashboard. */
export function wholeNumber(values: Values, name: Exclude<keyof Values, Flag>): number | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`--${name} takes a whole number`);
  return Number(value);
}
export function nonEmpty<T extends object>(value: T): T | undefined {
  return Object.keys(value).length > 0 ? value : undefined;
}
export function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
