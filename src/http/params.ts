/** Query and path parameters, checked: a bad one is a 400 (or a 404 for an id) naming it. */
import { BadRequestError, NotFoundError } from '../errors.ts';

function invalid(name: string, message: string): BadRequestError {
  return new BadRequestError('invalid_query', `${name}: ${message}`, { errors: [{ path: name, message }] });
}

export function intParam(value: unknown, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw invalid(name, `must be a whole number from ${min} to ${max}`);
  }
  return Number(value);
}

export function enumParam<T extends string>(value: unknown, name: string, allowed: readonly T[], fallback: T): T;
export function enumParam<T extends string>(value: unknown, name: string, allowed: readonly T[]): T | undefined;
export function enumParam<T extends string>(value: unknown, name: string, allowed: readonly T[], fallback?: T): T | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) throw invalid(name, `must be one of: ${allowed.join(', ')}`);
  return value as T;
}

export function environmentParam(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) throw invalid('environment', 'must be one non-empty string of at most 64 characters');
  return value;
}

/** A free-text or name filter: one non-empty string of at most `max` characters. */
export function textParam(value: unknown, name: string, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > max) throw invalid(name, `must be one non-empty string of at most ${max} characters`);
  return value;
}

export function releaseParam(value: string | undefined): string {
  if (!value || value.length > 200) throw new BadRequestError('invalid_release', 'a release name has 1 to 200 characters');
  return value;
}

/** A numeric id in a path; anything else names nothing, so it is not found. */
export function idParam(value: string | undefined, notFound: () => NotFoundError): number {
  if (!value || !/^[1-9]\d{0,15}$/.test(value)) throw notFound();
  return Number(value);
}
