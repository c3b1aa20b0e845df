/** GET /openapi.json: the API described in OpenAPI 3.1 (src/http/openapi.ts). */
import fs from 'node:fs';
import Router from '@koa/router';
import type { AppDeps, AppState } from '../deps.ts';
import { buildOpenApi } from '../openapi.ts';

const PACKAGE = JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

export function openapiRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>();
  const document = JSON.stringify(buildOpenApi(PACKAGE.version, deps.validator.schemas()));
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = document;
  });
  return router;
}
