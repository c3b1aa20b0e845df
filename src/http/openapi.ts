/**
 * The OpenAPI 3.1 document served at /openapi.json, built from the contracts the mounted routes declare
 * (src/http/contract.ts). Request bodies, queries and answers are the JSON Schemas of schemas/ and schemas/answers/,
 * as the validator loaded them (OpenAPI 3.1 speaks JSON Schema 2020-12, so they are used as they are). A route
 * mounted without a contract stops the document being built; test/openapi.test.ts checks every route has one.
 */
import type Router from '@koa/router';
import { contractOf, type Auth, type Contract } from './contract.ts';

const ALL_METHODS = 10; // a layer answering more methods than this is `router.all` middleware (CORS)

/** Every endpoint the routers mount, `METHOD /path`, with its contract; `router.all` layers stand for their OPTIONS preflight. */
export function routeTable<S>(routers: Router<S>[]): { route: string; contract: Contract | undefined }[] {
  const routes = new Map<string, Contract | undefined>();
  for (const router of routers) {
    for (const layer of router.stack) {
      if (layer.methods.length === 0) continue; // router.use middleware
      const methods = layer.methods.length > ALL_METHODS ? ['OPTIONS'] : layer.methods.filter((m) => m !== 'HEAD');
      for (const method of methods) routes.set(`${method} ${layer.path}`, contractOf(layer));
    }
  }
  return [...routes].sort(([a], [b]) => a.localeCompare(b)).map(([route, contract]) => ({ route, contract }));
}

/** The component name of a schema: its name, an answer's `answer.<name>` (a component's name has no `/`). */
const componentOf = (name: string) => name.replace(/^answers\//, 'answer.');

/**
 * The schemas keep their `$id`, so their own `#/$defs/...` and their
 * references to each other (`"$ref": "session"`) resolve inside the
 * document as they do in the validator; `$schema` is the document's dialect.
 */
function components(schemas: Record<string, object>): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.entries(schemas).map(([name, schema]) => {
      const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
      return [componentOf(name), rest];
    }),
  );
}

const STATUS_TEXT: Record<number, string> = {
  400: 'invalid request: malformed JSON, a rule of the schema broken, or a bad parameter',
  401: 'missing or unknown key (dashboard: not signed in)',
  402: 'the plan does not allow it (seats)',
  403: 'the key may not do this (public key on a secret endpoint, or instance not bound); dashboard: a wrong CSRF token, or an owner action by a member',
  404: 'not found (or belongs to another project or organisation)',
  409: 'conflict',
  422: 'a notification target refused by the outbound rules (`rule` names it), or email without SMTP_URL',
  413: 'body larger than BODY_LIMIT_BYTES',
  415: 'unsupported Content-Type',
  429: 'rate limit reached; see Retry-After and RateLimit',
  503: 'a store is unavailable or the process is shutting down',
};

const SECURITY: Record<Auth, Record<string, string[]>[]> = {
  none: [],
  secret: [{ serviceKey: [] }],
  'secret+instance': [{ serviceKey: [], serviceInstance: [] }],
  public: [{ serviceKey: [] }, { keyQuery: [] }],
  sentry: [{ sentryAuth: [] }, { sentryKeyQuery: [] }, {}],
  dashboard: [{ sessionCookie: [] }, { bearerToken: [] }],
  session: [{ sessionCookie: [] }],
  bouncer: [{ bouncerKey: [] }],
  token: [{ bearerToken: [] }],
};

/** The parameters of a `*-query` schema: one per property, its description beside its schema (which checks it). */
function queryParams(route: string, name: string | undefined, schemas: Record<string, Record<string, unknown>>) {
  if (!name) return [];
  const schema = schemas[name] as { properties?: Record<string, { description?: string }> } | undefined;
  if (!name.endsWith('-query') || !schema?.properties) throw new Error(`${route}: no query schema ${name}.json`);
  return Object.entries(schema.properties).map(([param, { description, ...rest }]) => ({
    name: param,
    in: 'query',
    description: description ?? '',
    required: false,
    schema: rest,
  }));
}

/**
 * `schemas`: the schemas by name, as `Validator.schemas()` gives them; `routers`: the routers the API mounts, each
 * route with its contract.
 */
export function buildOpenApi<S>(version: string, schemas_: Record<string, object>, routers: Router<S>[]) {
  const schemas = components(schemas_);
  const error = { $ref: '#/components/schemas/Error' };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { route, contract: doc } of routeTable(routers)) {
    if (!doc) throw new Error(`${route} is mounted without a contract (src/http/contract.ts)`);
    const [method, koaPath] = route.split(' ') as [string, string];
    const openPath = koaPath.replace(/:([A-Za-z_]+)/g, '{$1}');
    const errors = [...new Set([...(doc.auth === 'none' ? [] : [401, 403]), ...(doc.errors ?? [])])].sort();
    const responses: Record<string, unknown> = {};
    for (const [status, ok] of Object.entries(doc.ok)) {
      if (typeof ok === 'string') responses[status] = { description: ok };
      else if ('media' in ok) responses[status] = { description: ok.description, content: { [ok.media]: { schema: { type: 'string' } } } };
      else {
        if (!schemas[componentOf(`answers/${ok.schema}`)]) throw new Error(`${route}: no schema answers/${ok.schema}.json`);
        responses[status] = {
          description: ok.description,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${componentOf(`answers/${ok.schema}`)}` } } },
        };
      }
    }
    for (const status of errors) responses[status] = { description: STATUS_TEXT[status] ?? 'error', content: { 'application/json': { schema: error } } };
    let requestBody: unknown;
    if (doc.body && 'schema' in doc.body) {
      if (!schemas[doc.body.schema]) throw new Error(`${route}: no schema ${doc.body.schema}.json`);
      const schema = { $ref: `#/components/schemas/${doc.body.schema}` };
      requestBody = { required: true, content: Object.fromEntries((doc.body.mediaTypes ?? ['application/json']).map((t) => [t, { schema }])) };
    } else if (doc.body) {
      requestBody = { required: true, description: doc.body.description, content: { [doc.body.raw]: { schema: { type: 'string' } } } };
    }
    (paths[openPath] ??= {})[method.toLowerCase()] = {
      tags: [doc.tag],
      summary: doc.summary,
      operationId: `${method.toLowerCase()}${openPath.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string = '') => c.toUpperCase())}`,
      security: SECURITY[doc.auth],
      ...(doc.params?.length || doc.query
        ? { parameters: [...(doc.params ?? []).map(({ read: _, ...p }) => ({ ...p, required: true })), ...queryParams(route, doc.query, schemas)] }
        : {}),
      ...(requestBody ? { requestBody } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Lookout',
      version,
      description: 'Error and security-event tracking backend. Every non-2xx answer is JSON `{reason, message, ...}`.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths,
    components: {
      schemas: {
        ...schemas,
        Error: {
          type: 'object',
          required: ['reason', 'message'],
          properties: {
            reason: { type: 'string', description: 'machine-readable cause' },
            message: { type: 'string', description: 'what went wrong, for people' },
          },
        },
      },
      securitySchemes: {
        serviceKey: { type: 'apiKey', in: 'header', name: 'X-Service-Key', description: 'secret key, or the public key on the sessions endpoint' },
        serviceInstance: { type: 'apiKey', in: 'header', name: 'X-Service-Instance', description: 'instance id returned by activation' },
        bouncerKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'a CrowdSec bouncer key (`lkb_…`, `lookout admin bouncer add`)' },
        keyQuery: { type: 'apiKey', in: 'query', name: 'key', description: 'public key, for navigator.sendBeacon' },
        sentryAuth: { type: 'apiKey', in: 'header', name: 'X-Sentry-Auth', description: '`Sentry sentry_key=<public key>, ...`' },
        sentryKeyQuery: { type: 'apiKey', in: 'query', name: 'sentry_key', description: 'public key' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'lookout_session',
          description: 'dashboard session (POST /api/dashboard/session); state-changing requests also send X-CSRF-Token',
        },
        bearerToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'an API token (`lkt_…`): project:read for GET under /projects, project:write for changes there, org:read for GET under /org; project:releases for the source map and release routes under /api/0',
        },
      },
    },
  };
}
