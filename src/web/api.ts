/**
 * The dashboard's JSON API (/api/dashboard). Every state-changing request
 * carries the session's CSRF token; a 401 sends the visitor to sign in.
 */
import type { SignedIn } from './types.ts';

/** Who is signed in (schemas/answers/signed-in.json). */
export type Session = SignedIn;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly body: Record<string, unknown> | null,
  ) {
    super(message);
  }
}

let csrfToken = '';
export function rememberSession(session: Session): void {
  csrfToken = session.csrf_token;
}

export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const res = await fetch(`/api/dashboard${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  if (res.status === 204) return undefined as T;
  const json = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  if (!res.ok) {
    if (res.status === 401 && path !== '/session') {
      location.assign(`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`);
    }
    throw new ApiError(res.status, String(json?.reason ?? 'error'), String(json?.message ?? res.statusText), json);
  }
  return json as T;
}
