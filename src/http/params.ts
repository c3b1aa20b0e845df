/**
 * Path parameters, checked: a bad one is a 400 (or a 404 for an id) naming it. Query parameters are checked against
 * their `*-query` schema (Validator.query).
 */
import { LIMITS } from '../domain/error-event.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';

function invalid(name: string, message: string): BadRequestError {
  return new BadRequestError('invalid_query', `${name}: ${message}`, { errors: [{ path: name, message }] });
}

export function enumParam<T extends string>(value: unknown, name: string, allowed: readonly T[], fallback: T): T;
export function enumParam<T extends string>(value: unknown, name: string, allowed: readonly T[]): T | undefined;
export function enumParam<T extends string>(value: unknown, name: string, allowed: readonly T[], fallback?: T): T | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) throw invalid(name, `must be one of: ${allowed.join(', ')}`);
  return value as T;
}

export function releaseParam(value: string | undefined): string {
  if (!value || value.length > LIMITS.release) throw new BadRequestError('invalid_release', `a release name has 1 to ${LIMITS.release} characters`);
  return value;
}

/** A numeric id in a path; anything else names nothing, so it is not found. */
export function idParam(value: string | undefined, notFound: () => NotFoundError): number {
  if (!value || !/^[1-9]\d{0,15}$/.test(value)) throw notFound();
  return Number(value);
}
