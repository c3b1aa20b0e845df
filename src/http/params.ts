/**
 * Path parameters, each declared once: its documentation (for /openapi.json) and how the contract reads it before
 * the handler runs (src/http/contract.ts). A bad id names nothing, so it is a 404 with the resource's reason; any
 * other bad value is a 400 naming the parameter. Query parameters are checked against their `*-query` schema
 * (Validator.query).
 */
import { LIMITS } from '../domain/error-event.ts';
import { BadRequestError, NotFoundError, type AppError } from '../errors.ts';

export interface PathParam<N extends string = string, T = unknown> {
  name: N;
  in: 'path';
  description: string;
  schema: Record<string, unknown>;
  /** the value as the handler gets it; throws the 4xx a bad one is answered with */
  read: (value: string) => T;
}

/** A numeric id; anything else names nothing, so it is not found. */
export function readId(value: string | undefined, notFound: () => AppError): number {
  if (!value || !/^[1-9]\d{0,15}$/.test(value)) throw notFound();
  return Number(value);
}

/** A path parameter that is a numeric id of the resource `notFound` names. */
export const idParam = <N extends string>(name: N, description: string, notFound: () => AppError): PathParam<N, number> => ({
  name,
  in: 'path',
  description,
  schema: { type: 'integer', minimum: 1 },
  read: (value) => readId(value, notFound),
});

/** A path parameter taken as it is sent (the service says whether it names anything). */
export const textParam = <N extends string>(name: N, description: string, schema: Record<string, unknown> = { type: 'string' }): PathParam<N, string> => ({
  name,
  in: 'path',
  description,
  schema,
  read: (value) => value,
});

/** A path parameter that is one of a few words; another is a 400. */
export const enumParam = <N extends string, T extends string>(name: N, description: string, allowed: readonly T[]): PathParam<N, T> => ({
  name,
  in: 'path',
  description,
  schema: { type: 'string', enum: allowed },
  read: (value) => {
    if (!(allowed as readonly string[]).includes(value)) {
      const message = `must be one of: ${allowed.join(', ')}`;
      throw new BadRequestError('invalid_query', `${name}: ${message}`, { errors: [{ path: name, message }] });
    }
    return value as T;
  },
});

export const issueNotFound = () => new NotFoundError('issue_not_found', 'no such issue in this project');
export const eventNotFound = () => new NotFoundError('event_not_found', 'no such event in this issue');
export const projectNotFound = () => new NotFoundError('project_not_found', 'no such project in your organisation');
export const channelNotFound = () => new NotFoundError('channel_not_found', 'no such channel in this project');

/** Path parameters used by several routes. */
export const PARAMS = {
  issue: idParam('id', 'issue id', issueNotFound),
  /** 32 hex characters (a UUID's dashes and capitals are read too); anything else names nothing */
  event: {
    name: 'event',
    in: 'path',
    description: 'event id (32 hex characters)',
    schema: { type: 'string', pattern: '^[0-9a-fA-F-]{32,36}$' },
    read: (value: string): string => {
      const id = value.toLowerCase().replace(/-/g, '');
      if (!/^[0-9a-f]{32}$/.test(id)) throw eventNotFound();
      return id;
    },
  },
  /** a project of the signed-in person's organisation (the dashboard checks that it is) */
  project: idParam('project', 'project id', projectNotFound),
  /** the project of a Sentry DSN's path */
  dsnProject: {
    name: 'project',
    in: 'path',
    description: 'project id (the last part of the DSN path)',
    schema: { type: 'integer', minimum: 1 },
    read: (value: string): number => {
      if (!/^[1-9]\d{0,15}$/.test(value)) throw new BadRequestError('invalid_project', 'the project id in the path must be a number');
      return Number(value);
    },
  },
  channel: idParam('channel', 'notification channel id', channelNotFound),
  bouncer: textParam('bouncer', "a CrowdSec bouncer's id (from the bouncers list)"),
  release: {
    name: 'release',
    in: 'path',
    description: 'release name',
    schema: { $ref: 'session#/$defs/release' },
    read: (value: string): string => {
      if (!value || value.length > LIMITS.release) throw new BadRequestError('invalid_release', `a release name has 1 to ${LIMITS.release} characters`);
      return value;
    },
  },
  session: textParam('id', 'a session id (from a sessions list)'),
  token: textParam('id', 'a token id (from the tokens list)'),
  userEmail: textParam('email', "the user's email"),
} as const satisfies Record<string, PathParam>;
