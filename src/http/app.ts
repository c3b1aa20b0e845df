/** The Koa application: middleware in order, then one router per resource. */
import Koa from 'koa';
import type { Config } from '../../config/index.ts';
import type { Logger } from '../log.ts';
import type { KeyResolver } from '../services/key-resolver.ts';
import type { EventsService } from '../services/events.service.ts';
import type { IssuesService } from '../services/issues.service.ts';
import type { SdkService } from '../services/sdk.service.ts';
import type { ProjectDoc } from '../store/projects.store.ts';
import { errorsMiddleware } from './middleware/errors.middleware.ts';
import { requestLogMiddleware } from './middleware/request-log.middleware.ts';
import { eventsRoutes } from './routes/events.route.ts';
import { issuesRoutes } from './routes/issues.route.ts';
import { sdkRoutes } from './routes/sdk.route.ts';
import type { Validator } from './validation.ts';

export interface AppState {
  requestId: string;
  log: Logger;
  project: ProjectDoc;
}

export interface AppDeps {
  config: Config;
  log: Logger;
  validator: Validator;
  resolver: KeyResolver;
  sdk: SdkService;
  events: EventsService;
  issues: IssuesService;
}

export function makeApp(deps: AppDeps): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: false });
  app.silent = true; // errors are logged by the errors middleware, with the request id
  app.use(requestLogMiddleware(deps.log));
  app.use(errorsMiddleware());
  for (const router of [sdkRoutes(deps), eventsRoutes(deps), issuesRoutes(deps)]) {
    app.use(router.routes());
    app.use(router.allowedMethods({ throw: false }));
  }
  return app;
}
