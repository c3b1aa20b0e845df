/** GET /openapi.json: the API described in OpenAPI 3.1 (src/http/openapi.ts). */
import Router from '@koa/router';
import { contracted } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { buildOpenApi } from '../openapi.ts';
import { PACKAGE_VERSION } from '../../util/paths.ts';

/** `routers`: every router the API mounts, this one among them; the document is built from their contracts at start. */
export function openapiRoutes(deps: AppDeps, routers: Router<AppState>[]): Router<AppState> {
  const router = new Router<AppState>();
  const routes = contracted(router, deps);
  let document: string | undefined;
  routes.get('/openapi.json', { tag: 'operations', summary: 'This document', auth: 'none', ok: { 200: { description: 'the OpenAPI 3.1 document', schema: 'openapi-document' } } }, (ctx) => {
    ctx.type = 'application/json';
    ctx.body = document ??= JSON.stringify(buildOpenApi(PACKAGE_VERSION, deps.validator.schemas(), routers));
  });
  return router;
}
