/**
 * Source maps applied to an error event's JavaScript frames: which frames can be mapped and by what (a debug ID
 * from `debug_meta.images`, else the frame's URL in the event's release), and each frame mapped to its original
 * file, line, column, function and source lines. Pure: the caller finds the maps (src/services/sourcemaps.service.ts)
 * and hands each frame's map, or the reason it has none, to `symbolicate`.
 *
 * The mapped stack replaces the frames and the minified one is kept beside it as `raw_stacktrace`, as Sentry keeps
 * it; a frame that could not be mapped says why in `data.sourcemap_error`.
 */
import { originalPositionFor, sourceContentFor, type TraceMap } from '@jridgewell/trace-mapping';
import * as acorn from 'acorn';
import * as walk from 'acorn-walk';
import type { Obj } from './obj.ts';

/** Why a frame was not mapped, with the words the event page shows. */
export type UnmappedReason =
  | { reason: 'debug_id_not_found'; debug_id: string }
  | { reason: 'url_not_found'; url: string; release: string | null; dist: string | null }
  | { reason: 'no_release'; url: string }
  | { reason: 'no_sourcemap_reference'; url: string }
  | { reason: 'map_not_found'; url: string; map: string }
  | { reason: 'map_unreadable'; map: string; error: string }
  | { reason: 'not_covered'; map: string; line: number; column: number };

export function reasonWords(r: UnmappedReason): string {
  switch (r.reason) {
    case 'debug_id_not_found':
      return `no uploaded source map has debug ID ${r.debug_id}`;
    case 'url_not_found':
      return `no uploaded file has the URL ${r.url} in release ${r.release}${r.dist ? ` (dist ${r.dist})` : ''}`;
    case 'no_release':
      return `the event has no debug ID for ${r.url} and no release to find its URL in`;
    case 'no_sourcemap_reference':
      return `the uploaded file ${r.url} names no source map (no sourceMappingURL and no Sourcemap header)`;
    case 'map_not_found':
      return `${r.url} names the source map ${r.map}, which was not uploaded`;
    case 'map_unreadable':
      return `the source map ${r.map} could not be read: ${r.error}`;
    case 'not_covered':
      return `the source map ${r.map} has no mapping for line ${r.line}, column ${r.column}`;
  }
}

/** A parsed source map, with where it came from and, when its minified file was uploaded too, its functions. */
export interface MapSource {
  map: TraceMap;
  /** the map's URL as uploaded (`~/app.min.js.map`), said on each frame it maps */
  url: string;
  resolvedWith: 'debug-id' | 'release';
  /** the minified file's functions, innermost last at any offset (null: its minified file is not known) */
  scopes: Scope[] | null;
  /** a source's lines from the map's sourcesContent (null: none), split once per map by the caller's cache */
  lines?: (source: string) => string[] | null;
}

/** A function of a minified file: its span (line 1-based, column 0-based) and where its name is written. */
export interface Scope {
  start: Pos;
  end: Pos;
  name: { pos: Pos; text: string } | null;
}
type Pos = { line: number; column: number };

/** A stack frame as SDKs send it (only what mapping reads and writes is named). */
export type JsFrame = Obj & {
  abs_path?: string;
  filename?: string;
  function?: string;
  lineno?: number;
  colno?: number;
  in_app?: boolean;
  data?: Obj;
};

/** Where a frame's map is looked for: its file's URL and, when the page registered one, the file's debug ID. */
export interface MapRequest {
  url: string;
  debugId: string | null;
}

const JS_URL = /^(https?|app|file):\/\/|^~\//;
const CONTEXT_LINES = 5;

/** The stacks of an event that hold frames: its exceptions', its threads', its own. */
export function stacksOf(event: Obj): Obj[] {
  const values = ((event.exception as Obj | undefined)?.values as Obj[] | undefined) ?? [];
  const threads = ((event.threads as Obj | undefined)?.values as Obj[] | undefined) ?? [];
  return [...values, ...threads, event].filter((v) => v && typeof v === 'object' && v.stacktrace && typeof v.stacktrace === 'object');
}

const urlOf = (f: JsFrame) => (typeof f.abs_path === 'string' && f.abs_path ? f.abs_path : typeof f.filename === 'string' ? f.filename : '');

/** The debug ID of each file the page registered one for (`debug_meta.images` of type `sourcemap`), by its URL. */
export function debugIdsOf(event: Obj): Map<string, string> {
  const images = ((event.debug_meta as Obj | undefined)?.images as Obj[] | undefined) ?? [];
  const out = new Map<string, string>();
  for (const image of images) {
    if (!image || image.type !== 'sourcemap' || typeof image.code_file !== 'string' || typeof image.debug_id !== 'string') continue;
    out.set(image.code_file, image.debug_id.toLowerCase());
  }
  return out;
}

/** Whether a frame is minified JavaScript a map could apply to: a position in a file served to a browser or app. */
function mappable(frame: unknown, event: Obj, ids: Map<string, string>): frame is JsFrame {
  if (!frame || typeof frame !== 'object') return false;
  const f = frame as JsFrame;
  if (typeof f.lineno !== 'number' || typeof f.colno !== 'number' || f.data?.symbolicated === true) return false;
  const url = urlOf(f);
  return url !== '' && (ids.has(url) || JS_URL.test(url) || (event.platform === 'javascript' && !url.startsWith('<')));
}

/** Each distinct file the event's frames need a map for; empty when nothing in it can be mapped. */
export function mapRequests(event: Obj): MapRequest[] {
  const ids = debugIdsOf(event);
  const out = new Map<string, MapRequest>();
  for (const stack of stacksOf(event)) {
    for (const frame of ((stack.stacktrace as Obj).frames as unknown[] | undefined) ?? []) {
      if (!mappable(frame, event, ids)) continue;
      const url = urlOf(frame);
      out.set(url, { url, debugId: ids.get(url) ?? null });
    }
  }
  return [...out.values()];
}

/**
 * A file's URL as a release's uploads name it: the URL without query and fragment, then `~/` and its path (the
 * way `sentry-cli` names files it was not given a URL prefix for), longest first.
 */
export function urlCandidates(url: string): string[] {
  const bare = url.replace(/[?#].*$/, '');
  const out = [bare];
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/]*(\/.*)$/i.exec(bare);
  if (m) out.push(`~${m[1]}`);
  return [...new Set(out)];
}

/** Resolves `ref` (a sourceMappingURL or a map's source) against the URL of the file that names it. */
export function resolveUrl(ref: string, base: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(ref)) return ref;
  const tilde = base.startsWith('~/');
  try {
    const resolved = new URL(ref, tilde ? `http://~${base.slice(1)}` : base);
    return tilde ? `~${resolved.pathname}${resolved.search}` : resolved.href;
  } catch {
    return ref;
  }
}

/** What a frame shows as its file: a webpack source without its namespace, a URL's path, or the source as written. */
function displayName(resolved: string): string {
  const webpack = /^webpack:\/\/[^/]*\/(.*)$/.exec(resolved);
  if (webpack) return webpack[1]!;
  if (resolved.startsWith('~/')) return resolved.slice(1).replace(/[?#].*$/, '');
  try {
    return new URL(resolved).pathname;
  } catch {
    return resolved;
  }
}

/**
 * The functions of a minified file, from its syntax (acorn): each function's span and the name it is known by (its
 * own, or the variable, property or method it is assigned to). A file that does not parse has none.
 */
export function scopesOf(source: string): Scope[] | null {
  let ast: acorn.Node;
  try {
    ast = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true, allowHashBang: true, allowReturnOutsideFunction: true });
  } catch {
    try {
      ast = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'script', locations: true, allowHashBang: true, allowReturnOutsideFunction: true });
    } catch {
      return null;
    }
  }
  const scopes: Scope[] = [];
  const named = (node: acorn.Node | null | undefined): Scope['name'] => {
    if (!node || !node.loc) return null;
    if (node.type === 'Identifier' || node.type === 'PrivateIdentifier') return { pos: node.loc.start, text: (node as acorn.Identifier).name };
    if (node.type === 'Literal' && typeof (node as acorn.Literal).value === 'string') return { pos: node.loc.start, text: String((node as acorn.Literal).value) };
    if (node.type === 'MemberExpression') return named((node as acorn.MemberExpression).property);
    return null;
  };
  const add = (fn: acorn.Function, name: Scope['name']) => {
    if (fn.loc) scopes.push({ start: fn.loc.start, end: fn.loc.end, name });
  };
  walk.fullAncestor(ast, (node, _state, ancestors) => {
    if (node.type !== 'FunctionDeclaration' && node.type !== 'FunctionExpression' && node.type !== 'ArrowFunctionExpression') return;
    const fn = node as acorn.Function;
    if (fn.id) return add(fn, named(fn.id));
    const parent = ancestors[ancestors.length - 2];
    switch (parent?.type) {
      case 'VariableDeclarator':
        return add(fn, named((parent as acorn.VariableDeclarator).id));
      case 'AssignmentExpression':
        return add(fn, named((parent as acorn.AssignmentExpression).left as acorn.Node));
      case 'Property':
      case 'MethodDefinition':
      case 'PropertyDefinition':
        return add(fn, named((parent as acorn.Property).key));
      default:
        return add(fn, null);
    }
  });
  // innermost last among those holding a position: ordered by start, an inner function starts after its outer one
  return scopes.sort((a, b) => a.start.line - b.start.line || a.start.column - b.start.column);
}

const before = (a: Pos, b: Pos) => a.line < b.line || (a.line === b.line && a.column <= b.column);

/** The original name of the function holding a minified position: its name's own mapping, else the name as written. */
function scopeName(source: MapSource, at: Pos): string | null {
  if (!source.scopes) return null;
  let inner: Scope | null = null;
  for (const s of source.scopes) {
    if (!before(s.start, at)) break;
    if (before(at, s.end)) inner = s;
  }
  if (!inner) return null;
  if (!inner.name) return '<anonymous>';
  return originalPositionFor(source.map, inner.name.pos).name ?? inner.name.text;
}

/** One frame mapped through its map, or the reason it could not be. */
export function mapFrame(frame: JsFrame, source: MapSource): { frame: JsFrame } | { why: UnmappedReason } {
  const at = { line: frame.lineno!, column: frame.colno! - 1 };
  const pos = at.line >= 1 && at.column >= 0 ? originalPositionFor(source.map, at) : { source: null, line: null, column: null, name: null };
  if (pos.source === null || pos.line === null) return { why: { reason: 'not_covered', map: source.url, line: at.line, column: frame.colno! } };
  const resolved = resolveUrl(pos.source, source.url);
  const mapped: JsFrame = {
    ...frame,
    abs_path: resolved,
    filename: displayName(resolved),
    lineno: pos.line,
    colno: (pos.column ?? 0) + 1,
    function: scopeName(source, at) ?? pos.name ?? frame.function,
    ...(/(^|\/)node_modules\//.test(resolved) && { in_app: false }),
    data: { ...frame.data, symbolicated: true, sourcemap: source.url, resolved_with: source.resolvedWith },
  };
  delete mapped.data!.sourcemap_error;
  delete mapped.context_line;
  delete mapped.pre_context;
  delete mapped.post_context;
  const lines = source.lines ? source.lines(pos.source) : (sourceContentFor(source.map, pos.source)?.split(/\r?\n/) ?? null);
  if (lines !== null) {
    const i = pos.line - 1;
    if (i < lines.length) {
      mapped.context_line = lines[i];
      mapped.pre_context = lines.slice(Math.max(0, i - CONTEXT_LINES), i);
      mapped.post_context = lines.slice(i + 1, i + 1 + CONTEXT_LINES);
    }
  }
  return { frame: mapped };
}

/**
 * The event with every mappable frame mapped by its file's map (`sources`, by the frame's URL: a map, or why there
 * is none), each stack's minified frames kept as its `raw_stacktrace`; how many frames were mapped and not, and why not.
 */
export function symbolicate(event: Obj, sources: Map<string, MapSource | UnmappedReason>): { event: Obj; mapped: number; unmapped: number; reasons: Record<string, number> } {
  const ids = debugIdsOf(event);
  const out = structuredClone(event);
  let mapped = 0;
  let unmapped = 0;
  const reasons: Record<string, number> = {};
  for (const stack of stacksOf(out)) {
    const trace = stack.stacktrace as Obj;
    const frames = (trace.frames as unknown[] | undefined) ?? [];
    if (!frames.some((f) => mappable(f, out, ids))) continue;
    // mapped again (a map uploaded after the event): the minified frames kept the first time stay
    const raw = stack.raw_stacktrace ?? structuredClone(trace);
    trace.frames = frames.map((frame) => {
      if (!mappable(frame, out, ids)) return frame;
      const source = sources.get(urlOf(frame));
      if (!source) return frame;
      const result = 'reason' in source ? { why: source } : mapFrame(frame, source);
      if ('frame' in result) {
        mapped += 1;
        return result.frame;
      }
      unmapped += 1;
      reasons[result.why.reason] = (reasons[result.why.reason] ?? 0) + 1;
      return { ...frame, data: { ...frame.data, sourcemap_error: { ...result.why, message: reasonWords(result.why) } } };
    });
    stack.raw_stacktrace = raw;
  }
  return { event: out, mapped, unmapped, reasons };
}
