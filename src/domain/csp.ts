/**
 * Browser security reports (issue 46): Content-Security-Policy violations as
 * browsers send them, from a `report-uri` directive (`application/csp-report`,
 * `{"csp-report": {...}}` with dashed names) or a `report-to` one (the
 * Reporting API's `application/reports+json`, a list of `{type:
 * "csp-violation", url, user_agent, body: {...}}` with camelCase names), read
 * into events in Sentry's protocol with its `csp` interface. A violation is
 * grouped by its directive and the origin it blocked, and its issue is a
 * security issue of its own kind (`csp`), beside the sign-in bursts.
 */
import { isObj, type Obj } from './obj.ts';

/** The exception type of a CSP violation's issue: a security issue of its own kind. */
export const CSP_KIND = 'csp';

/** The kind of the issue an error-like event counts in: a CSP violation's is a security issue. */
export const issueKindOf = (exceptionType: string | null): 'error' | 'security' => (exceptionType === CSP_KIND ? 'security' : 'error');

/** What Lookout keeps of a violation, under Sentry's names. */
export interface CspViolation {
  document_uri: string | null;
  referrer: string | null;
  violated_directive: string | null;
  effective_directive: string;
  original_policy: string | null;
  disposition: string | null;
  blocked_uri: string;
  source_file: string | null;
  line_number: number | null;
  column_number: number | null;
  script_sample: string | null;
  status_code: number | null;
}

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The violations of a report body; what is not a CSP violation (another report type) is counted in `skipped`. */
export function readCspReports(body: unknown): { violations: (CspViolation & { user_agent: string | null })[]; skipped: number } {
  const out: (CspViolation & { user_agent: string | null })[] = [];
  let skipped = 0;
  const add = (v: CspViolation | null, ua: string | null) => (v ? out.push({ ...v, user_agent: ua }) : skipped++);
  if (Array.isArray(body)) {
    for (const report of body) {
      if (!isObj(report) || report.type !== 'csp-violation' || !isObj(report.body)) skipped++;
      else add(fromReportingApi(report.body, str(report.url)), str(report.user_agent));
    }
  } else if (isObj(body) && isObj(body['csp-report'])) {
    add(fromReportUri(body['csp-report']), null);
  } else {
    skipped++;
  }
  return { violations: out, skipped };
}

/** `report-uri`'s dashed names. */
function fromReportUri(r: Obj): CspViolation | null {
  const directive = str(r['effective-directive']) ?? firstWord(str(r['violated-directive']));
  if (!directive) return null;
  return {
    document_uri: str(r['document-uri']),
    referrer: str(r.referrer),
    violated_directive: str(r['violated-directive']),
    effective_directive: directive,
    original_policy: str(r['original-policy']),
    disposition: str(r.disposition),
    blocked_uri: str(r['blocked-uri']) ?? 'inline',
    source_file: str(r['source-file']),
    line_number: num(r['line-number']),
    column_number: num(r['column-number']),
    script_sample: str(r['script-sample']),
    status_code: num(r['status-code']),
  };
}

/** The Reporting API's camelCase names. */
function fromReportingApi(b: Obj, url: string | null): CspViolation | null {
  const directive = str(b.effectiveDirective) ?? firstWord(str(b.violatedDirective));
  if (!directive) return null;
  return {
    document_uri: str(b.documentURL) ?? url,
    referrer: str(b.referrer),
    violated_directive: str(b.violatedDirective) ?? directive,
    effective_directive: directive,
    original_policy: str(b.originalPolicy),
    disposition: str(b.disposition),
    blocked_uri: str(b.blockedURL) ?? 'inline',
    source_file: str(b.sourceFile),
    line_number: num(b.lineNumber),
    column_number: num(b.columnNumber),
    script_sample: str(b.sample),
    status_code: num(b.statusCode),
  };
}

const firstWord = (text: string | null) => (text ? (text.split(/\s+/)[0] ?? null) : null);

/**
 * What a violation blocked, as it is grouped: the origin of a URL (`https://cdn.example`), or the keyword a
 * browser sends for what has none (`inline`, `eval`, `data`, `blob`, `wasm-eval`).
 */
export function blockedOrigin(blocked: string): string {
  if (/^[a-z-]+$/i.test(blocked)) return blocked.toLowerCase();
  try {
    const url = new URL(blocked);
    return url.origin === 'null' ? url.protocol.replace(/:$/, '') : url.origin;
  } catch {
    return blocked.split(/[/?#]/)[0] || blocked;
  }
}

/** A violation as an event in Sentry's protocol (its `csp` interface), grouped by directive and blocked origin. */
export function cspEvent(v: CspViolation & { user_agent: string | null }, eventId: string, now: Date): Obj {
  const origin = blockedOrigin(v.blocked_uri);
  const { user_agent, ...csp } = v;
  return {
    event_id: eventId,
    timestamp: now.toISOString(),
    level: 'warning',
    logger: 'csp',
    message: `Blocked '${v.effective_directive}' from ${origin}`,
    csp,
    fingerprint: [CSP_KIND, v.effective_directive, origin],
    tags: { 'effective-directive': v.effective_directive, 'blocked-uri': origin },
    request: { url: v.document_uri ?? undefined, headers: user_agent ? { 'User-Agent': user_agent } : undefined },
  };
}
