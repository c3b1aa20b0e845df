/**
 * The web dashboard's page and assets, from dist/web (scripts/build-web.mjs),
 * read once when the app is made. Every page path answers the same
 * index.html; a visitor without a session is sent to /sign-in first. Assets
 * have hashed names, so they are cached for good; each is kept gzipped too.
 * A strict Content-Security-Policy allows nothing but this origin.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Middleware } from 'koa';
import { AppError } from '../errors.ts';
import type { AccountsService } from '../services/accounts.service.ts';
import type { AppState } from './state.ts';
import { SESSION_COOKIE } from './routes/dashboard-session.route.ts';
import { rootPath } from '../util/paths.ts';

export const WEB_DIR = rootPath('dist', 'web');

/**
 * The paths the page answers; those after the first two need a session. Anything under /projects is a page, since a
 * release's name holds dots, `+`, and `#`, `/` or spaces encoded (`/projects/1/releases/erp%4017.0.4%2Bbuild.7`).
 */
const OPEN_PAGES = new Set(['/sign-in', '/set-password']);
const PAGE = /^\/(?:sign-in|set-password|organisation|account|projects(?:\/.*)?)?\/?$/;

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.txt': 'text/plain; charset=utf-8' };

const SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
};

interface Asset {
  body: Buffer;
  gzip: Buffer;
  type: string;
}

function loadAssets(dir: string): { index: Buffer; assets: Map<string, Asset> } | null {
  const indexPath = path.join(dir, 'index.html');
  if (!fs.existsSync(indexPath)) return null;
  const assets = new Map<string, Asset>();
  for (const file of fs.readdirSync(path.join(dir, 'assets'))) {
    const body = fs.readFileSync(path.join(dir, 'assets', file));
    assets.set(`/assets/${file}`, { body, gzip: zlib.gzipSync(body), type: TYPES[path.extname(file)] ?? 'application/octet-stream' });
  }
  return { index: fs.readFileSync(indexPath), assets };
}

export function webMiddleware(accounts: AccountsService, dir = WEB_DIR): Middleware<AppState> {
  const built = loadAssets(dir);
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const page = PAGE.test(ctx.path);
    const asset = ctx.path.startsWith('/assets/');
    if (!page && !asset) return next();
    if (!built) throw new AppError(503, 'dashboard_not_built', 'the dashboard is not built: run `npm run build:web` (npm start builds it)');
    ctx.set(SECURITY_HEADERS);
    if (asset) {
      const found = built.assets.get(ctx.path);
      if (!found) return next();
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.vary('Accept-Encoding');
      ctx.type = found.type;
      if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
        ctx.set('Content-Encoding', 'gzip');
        ctx.body = found.gzip;
      } else {
        ctx.body = found.body;
      }
      return;
    }
    const open = OPEN_PAGES.has(ctx.path.replace(/\/$/, ''));
    if (!open && !(await accounts.session(ctx.cookies.get(SESSION_COOKIE)))) {
      ctx.redirect(`/sign-in?next=${encodeURIComponent(ctx.originalUrl)}`);
      return;
    }
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = built.index;
  };
}
