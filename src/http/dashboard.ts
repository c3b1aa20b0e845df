/**
 * The queue dashboard (bull-board) at /admin/queues, behind HTTP Basic auth
 * with the admin credential from config. With no ADMIN_PASSWORD configured
 * the dashboard is off: its paths answer 404, they are never open.
 */
import crypto from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type { Queue } from 'bullmq';
import type { Middleware } from 'koa';
import { AppError, NotFoundError } from '../errors.ts';
import type { AppState } from './state.ts';

export const DASHBOARD_PATH = '/admin/queues';

/** Whether a request path belongs to the dashboard (its page, assets and API). */
export function inDashboard(path: string): boolean {
  return path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);
}

export interface AdminCredential {
  username: string;
  password: string;
}

/** Hashing both sides first gives equal lengths, so the comparison takes the same time whatever is sent. */
function same(a: string, b: string): boolean {
  const digest = (s: string) => crypto.createHash('sha256').update(s).digest();
  return crypto.timingSafeEqual(digest(a), digest(b));
}

function basicAuth(credential: AdminCredential): Middleware<AppState> {
  return async (ctx, next) => {
    const [scheme, encoded] = ctx.get('authorization').split(' ');
    const decoded = scheme?.toLowerCase() === 'basic' && encoded ? Buffer.from(encoded, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    // Both parts are always compared, so the time taken does not tell which one was wrong.
    const userOk = same(decoded.slice(0, Math.max(colon, 0)), credential.username);
    const passwordOk = same(decoded.slice(colon + 1), credential.password);
    if (colon <= 0 || !userOk || !passwordOk) {
      throw new AppError(401, 'unauthorized', 'the queue dashboard needs the admin credential (HTTP Basic)', {}, { 'WWW-Authenticate': 'Basic realm="Lookout queues", charset="UTF-8"' });
    }
    await next();
  };
}

export function dashboardMiddleware(queues: Queue[], credential: AdminCredential | null): Middleware<AppState> {
  if (!credential) {
    return async (ctx, next) => {
      if (!inDashboard(ctx.path)) return next();
      throw new NotFoundError('dashboard_disabled', 'the queue dashboard is off; set ADMIN_PASSWORD to turn it on');
    };
  }
  const adapter = new KoaAdapter();
  adapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({ queues: queues.map((q) => new BullMQAdapter(q)), serverAdapter: adapter, options: { uiConfig: { boardTitle: 'Lookout queues' } } });
  const auth = basicAuth(credential);
  const board = adapter.registerPlugin() as unknown as Middleware<AppState>;
  return async (ctx, next) => (inDashboard(ctx.path) ? auth(ctx, () => board(ctx, next)) : next());
}
