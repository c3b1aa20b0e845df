/**
 * The Sentry envelope format: a header line (JSON), then for each item a
 * header line `{"type", "length"?}` and its payload, either `length` bytes or
 * up to the next newline. Pure parsing; what each item means is the caller's.
 */
export interface EnvelopeItem {
  type: string;
  /** the item's header as sent (an attachment's filename, content_type, attachment_type) */
  header: Record<string, unknown>;
  payload: Buffer;
}

export interface Envelope {
  header: { dsn?: string; event_id?: string; sent_at?: string; [key: string]: unknown };
  items: EnvelopeItem[];
}

export class EnvelopeError extends Error {}

const NEWLINE = 0x0a;
/** More items than any SDK sends in one envelope. */
export const MAX_ITEMS = 1000;

function jsonObject(bytes: Buffer, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new EnvelopeError(`${what} is not valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new EnvelopeError(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

export function parseEnvelope(body: Buffer): Envelope {
  let at = 0;
  const line = (): Buffer | null => {
    if (at >= body.length) return null;
    let end = body.indexOf(NEWLINE, at);
    if (end === -1) end = body.length;
    const out = body.subarray(at, end);
    at = end + 1;
    return out;
  };
  const first = line();
  if (!first || first.length === 0) throw new EnvelopeError('the envelope has no header line');
  const header = jsonObject(first, 'the envelope header');
  const items: EnvelopeItem[] = [];
  for (;;) {
    const headerLine = line();
    if (headerLine === null) break;
    if (headerLine.length === 0) continue; // trailing newline
    if (items.length >= MAX_ITEMS) throw new EnvelopeError(`more than ${MAX_ITEMS} items`);
    const itemHeader = jsonObject(headerLine, `item ${items.length + 1}'s header`);
    if (typeof itemHeader.type !== 'string') throw new EnvelopeError(`item ${items.length + 1} has no type`);
    let payload: Buffer;
    if (itemHeader.length !== undefined) {
      const length = itemHeader.length;
      if (!Number.isInteger(length) || (length as number) < 0 || at + (length as number) > body.length) {
        throw new EnvelopeError(`item ${items.length + 1}'s length does not fit the envelope`);
      }
      payload = body.subarray(at, at + (length as number));
      at += length as number;
      if (body[at] === NEWLINE) at += 1;
    } else {
      payload = line() ?? Buffer.alloc(0);
    }
    items.push({ type: itemHeader.type, header: itemHeader, payload });
  }
  return { header: header as Envelope['header'], items };
}

/** Whether text is an envelope rather than one JSON event: a header line, then an item header with a type. */
export function looksLikeEnvelope(text: string): boolean {
  const [first, second] = text.split('\n', 2);
  if (!first || !second?.trim()) return false;
  try {
    const [header, item] = [JSON.parse(first) as unknown, JSON.parse(second) as unknown];
    const object = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
    return object(header) && object(item) && typeof item.type === 'string';
  } catch {
    return false;
  }
}

/** The public key from `X-Sentry-Auth` or `Authorization` (`Sentry sentry_key=…, …`). */
export function keyFromSentryAuth(value: string | undefined): string | undefined {
  const match = value && /(?:^|[\s,])sentry_key=([^,\s]+)/.exec(value);
  return match ? match[1] : undefined;
}

/** The public key and project id of a DSN `proto://<key>@host[:port]/<project>`. */
export function parseDsn(dsn: unknown): { key: string; project: string } | undefined {
  if (typeof dsn !== 'string') return undefined;
  try {
    const url = new URL(dsn);
    const project = url.pathname.split('/').filter(Boolean).pop();
    return url.username && project ? { key: decodeURIComponent(url.username), project } : undefined;
  } catch {
    return undefined;
  }
}
