/**
 * The part of Sentry's web API (`/api/0`) that `sentry-cli` and the bundler plugins built on it call to upload
 * source maps and make releases (issue 52; `docs/api.md`, "Source maps"), recorded from sentry-cli 2.58 and 3.8:
 * - `GET  /api/0/organizations/<org>/chunk-upload/`: the upload options (artifact bundles accepted);
 * - `POST /api/0/organizations/<org>/chunk-upload/`: gzipped chunks, each a multipart file named by its SHA-1;
 * - `POST /api/0/organizations/<org>/artifactbundle/assemble/`: the bundle from its chunks, for its projects;
 * - `POST /api/0/organizations/<org>/releases/` (3.x) and `/api/0/projects/<org>/<project>/releases/` (2.x):
 *   `releases new`; `PUT …/releases/<version>/`: `releases finalize`.
 * An API token (`Authorization: Bearer lkt_…`) with the project:releases scope; organisations and projects by slug
 * or id. Errors are Lookout's `{reason, message}`, which sentry-cli prints.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { BadRequestError } from '../../errors.ts';
import { REQUEST_BYTES } from '../../services/sourcemaps.service.ts';
import { readMultipartFiles } from '../body.ts';
import { contracted, paramsOf } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { PARAMS, textParam } from '../params.ts';
import type { WebState } from './dashboard-session.route.ts';
import { toolToken } from './tool-token.ts';

const ORG = textParam('org', "the organisation's slug or id");
const PROJECT = textParam('project', "the project's slug or id");
const VERSION = { ...PARAMS.release, name: 'version' } as const;

/** Room for the multipart framing around a request's chunks. */
const FRAMING_BYTES = 1024 * 1024;

type Ctx = Context & { state: WebState };

export function sentryToolsRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<WebState>({ prefix: '/api/0' });
  const routes = contracted(router, deps);

  /** An API token with the project:releases scope, of a user still in the organisation. */
  const token = toolToken(deps)('project:releases');
  /** The organisation of the path (ORG, read by the route's contract), the token's own. */
  const orgOf = (ctx: Ctx) => deps.sourcemaps.organisation(paramsOf(ctx).org as string, ctx.state.web.org);
  // the address the tool reached (behind a TRUST_PROXY proxy, the one it was sent to), where it sends its chunks
  const uploadUrl = (ctx: Ctx, org: string) => `${ctx.protocol}://${ctx.host}/api/0/organizations/${encodeURIComponent(org)}/chunk-upload/`;
  const dateOf = (text: string | null | undefined, now: Date) => {
    if (text === null) return null;
    const at = text === undefined ? now : new Date(text);
    if (Number.isNaN(at.getTime())) throw new BadRequestError('invalid_date', `${text} is not a date`);
    return at;
  };

  routes.get(
    '/organizations/:org/chunk-upload/',
    { tag: 'releases', summary: 'How to upload chunks of source map bundles (sentry-cli asks first)', auth: 'token', params: [ORG], ok: { 200: { description: 'the upload options', schema: 'chunk-upload-options' } }, errors: [404] },
    token,
    async (ctx) => {
      const org = await orgOf(ctx);
      ctx.body = deps.sourcemaps.uploadOptions(uploadUrl(ctx, org.slug ?? String(org._id)));
    },
  );

  routes.post(
    '/organizations/:org/chunk-upload/',
    {
      tag: 'releases',
      summary: 'Chunks of a source map bundle: multipart files `file_gzip` (gzipped) or `file`, each named by its SHA-1',
      auth: 'token',
      params: [ORG],
      body: { raw: 'multipart/form-data', description: 'up to 64 chunks of up to 8 MiB each, 32 MiB in all' },
      ok: { 200: { description: 'the chunks are stored', schema: 'chunks-stored' } },
      errors: [400, 404, 413, 415],
    },
    token,
    async (ctx) => {
      const org = await orgOf(ctx);
      const files = await readMultipartFiles(ctx, REQUEST_BYTES + FRAMING_BYTES);
      const chunks = files.filter((f) => f.field === 'file' || f.field === 'file_gzip').map((f) => ({ name: f.filename, data: f.data, gzip: f.field === 'file_gzip' }));
      await deps.sourcemaps.addChunks(org._id, chunks, new Date());
      ctx.status = 200;
      ctx.body = {};
    },
  );

  routes.post(
    '/organizations/:org/artifactbundle/assemble/',
    {
      tag: 'releases',
      summary: 'Assembles an uploaded source map bundle for its projects; answers the chunks still missing',
      auth: 'token',
      params: [ORG],
      body: { schema: 'artifact-bundle-assemble' },
      ok: { 200: { description: 'where the assembly stands', schema: 'assemble' } },
      errors: [400, 404],
    },
    token,
    async (ctx, { body }) => {
      ctx.body = await deps.sourcemaps.assemble(await orgOf(ctx), body, new Date());
    },
  );

  const releaseNew = async (ctx: Ctx, body: { version?: string; projects?: string[]; dateReleased?: string | null }, projects: string[]) => {
    if (!body.version) throw new BadRequestError('missing_version', 'name the release (version)');
    const now = new Date();
    ctx.status = 201;
    ctx.body = await deps.sourcemaps.release(await orgOf(ctx), body.version, projects, body.dateReleased ? dateOf(body.dateReleased, now) : undefined, now);
  };
  const releaseUpdate = async (ctx: Ctx, version: string, body: { projects?: string[]; dateReleased?: string | null }, projects: string[]) => {
    const now = new Date();
    ctx.body = await deps.sourcemaps.release(await orgOf(ctx), version, projects, 'dateReleased' in body ? dateOf(body.dateReleased, now) : undefined, now);
  };
  const release = { tag: 'releases', auth: 'token', body: { schema: 'tool-release' }, ok: { 201: { description: 'the release', schema: 'tool-release' } }, errors: [400, 404] } as const;
  const updated = { ...release, ok: { 200: { description: 'the release', schema: 'tool-release' } } } as const;

  routes.post('/organizations/:org/releases/', { ...release, summary: 'Makes a release of the projects named (sentry-cli 3.x releases new)', params: [ORG] }, token, (ctx, { body }) =>
    releaseNew(ctx, body, body.projects ?? []),
  );
  routes.post('/projects/:org/:project/releases/', { ...release, summary: 'Makes a release of the project (sentry-cli 2.x releases new)', params: [ORG, PROJECT] }, token, (ctx, { params, body }) =>
    releaseNew(ctx, body, [params.project, ...(body.projects ?? [])]),
  );
  routes.put('/organizations/:org/releases/:version/', { ...updated, summary: 'Marks a release released (sentry-cli 3.x releases finalize)', params: [ORG, VERSION] }, token, (ctx, { params, body }) =>
    releaseUpdate(ctx, params.version, body, body.projects ?? []),
  );
  routes.put('/projects/:org/:project/releases/:version/', { ...updated, summary: 'Marks a release released (sentry-cli 2.x releases finalize)', params: [ORG, PROJECT, VERSION] }, token, (ctx, { params, body }) =>
    releaseUpdate(ctx, params.version, body, [params.project, ...(body.projects ?? [])]),
  );

  return router as unknown as Router<AppState>;
}
