/**
 * The OpenAPI document against the routers the API really mounts: a route
 * mounted without a contract, or missing from the document, or a documented
 * route that does not exist, fails here. Every `$ref` in it must resolve, and
 * every request and answer schema must be one of schemas/. (Every 2xx JSON
 * answer the suite sees through `call` is checked against its documented
 * schema: test/helpers/context.ts.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeRouters } from '../src/http/app.ts';
import { routeTable } from '../src/http/openapi.ts';
import { makeApiDeps } from '../src/http/server.ts';
import { call, startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

/** `METHOD /path` of every operation in the document, in @koa/router's `:param` syntax. */
function documented(doc: { paths: Record<string, Record<string, unknown>> }): string[] {
  return Object.entries(doc.paths)
    .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`))
    .sort();
}

it('every mounted route has a contract, and the document lists exactly those routes', async () => {
  const res = await call(ctx, 'GET', '/openapi.json');
  expect(res.status).toBe(200);
  expect(res.body.openapi).toBe('3.1.0');
  const table = routeTable(makeRouters(makeApiDeps(ctx.runtime, 'openapi-test')));
  expect(table.filter((r) => !r.contract).map((r) => r.route)).toEqual([]);
  const mounted = table.map((r) => r.route);
  const inDocument = documented(res.body);
  expect({ missing: mounted.filter((r) => !inDocument.includes(r)), unknown: inDocument.filter((r) => !mounted.includes(r)) }).toEqual({
    missing: [],
    unknown: [],
  });
  // the spec's endpoints are all there
  for (const route of [
    'POST /api/v1/sdk/activate',
    'GET /api/v1/sdk/config',
    'PUT /api/v1/sdk/contacts',
    'POST /api/v1/sessions',
    'POST /api/v1/events',
    'GET /api/v1/issues',
    'GET /api/v1/issues/:id',
    'POST /api/v1/issues/:id/status',
  ]) {
    expect(inDocument).toContain(route);
  }
});

it("every path parameter is declared in its route's contract, which reads it, and only those", () => {
  const table = routeTable(makeRouters(makeApiDeps(ctx.runtime, 'openapi-test')));
  const mismatched = table
    .filter((r) => r.contract && !r.route.startsWith('OPTIONS '))
    .map((r) => ({ route: r.route, inPath: [...r.route.matchAll(/:(\w+)/g)].map((m) => m[1]).sort(), declared: (r.contract!.params ?? []).map((p) => p.name).sort() }))
    .filter((r) => r.inPath.join() !== r.declared.join());
  expect(mismatched).toEqual([]);
});

it('every reference resolves and the request bodies are the JSON Schemas of schemas/', async () => {
  const doc = (await call(ctx, 'GET', '/openapi.json')).body;
  const schemas = doc.components.schemas as Record<string, { $id?: string }>;
  const byId = new Map(
    Object.values(schemas)
      .filter((s) => s.$id)
      .map((s) => [s.$id!, s]),
  );
  const refs: { ref: string; base: unknown }[] = [];
  const walk = (node: unknown, base: unknown) => {
    if (Array.isArray(node)) node.forEach((n) => walk(n, base));
    else if (node && typeof node === 'object') {
      const here = (node as { $id?: string }).$id ? node : base;
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') refs.push({ ref: v, base: here });
        else walk(v, here);
      }
    }
  };
  walk(doc, doc);
  expect(refs.length).toBeGreaterThan(10);
  const pointer = (root: unknown, path: string) =>
    path
      .split('/')
      .slice(1)
      .reduce<unknown>((n, part) => (n as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], root);
  for (const { ref, base } of refs) {
    const [resource, fragment = ''] = ref.split('#');
    // a relative reference is read against the $id it appears under (answers/issue-row's "issue" is answers/issue)
    const baseId = (base as { $id?: string }).$id ?? '';
    const id = resource && baseId.includes('/') && !resource.includes('/') ? `${baseId.slice(0, baseId.lastIndexOf('/') + 1)}${resource}` : resource;
    const root = id ? byId.get(id) : base;
    expect(root, `${ref}: no schema with $id ${resource}`).toBeDefined();
    expect(pointer(root, fragment), `${ref} does not resolve`).toBeDefined();
  }
  expect(doc.paths['/api/v1/events'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/event' });
  expect(schemas.event!.$id).toBe('event');
});

it('every success answer is declared: JSON with its schema, another media type, or no body (204, a redirect)', () => {
  const table = routeTable(makeRouters(makeApiDeps(ctx.runtime, 'openapi-test')));
  const undeclared = table.flatMap(({ route, contract }) =>
    Object.entries(contract?.ok ?? {})
      .filter(([status, answer]) => typeof answer === 'string' && status !== '204' && !status.startsWith('3'))
      .map(([status]) => `${route} ${status}`),
  );
  expect(undeclared).toEqual([]);
});
