/** What each part of the dashboard's API (dashboard*.route.ts) is mounted with. */
import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type { Contracted } from '../contract.ts';
import type { AppDeps } from '../deps.ts';
import type { WebState } from './dashboard-session.route.ts';
import type { WayIn } from './project-reads.ts';

export type WebContext = RouterContext<WebState>;

export interface DashboardScope {
  router: Router<WebState>;
  routes: Contracted<WebState>;
  deps: AppDeps;
  /** the project of the path, checked to be in the signed-in user's organisation (404 otherwise) */
  projectId: (ctx: WebContext) => Promise<number>;
  /** how the reads shared with the key API find the project */
  way: WayIn;
}
