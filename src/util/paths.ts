/**
 * Where Lookout's own files are (schemas, Redis scripts, the built dashboard, the embedded FerretDB's sources), the
 * same whether it runs from its TypeScript sources (this file, under tsx) or from the compiled bundle
 * (dist/server/lookout.mjs, where esbuild inlines this module): both sit two folders below the root.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(import.meta.url);

/** The folder holding package.json. */
export const ROOT = path.resolve(path.dirname(HERE), '..', '..');

/** Whether this process runs the compiled bundle (`npm start`, the image) rather than the sources under tsx. */
export const COMPILED = HERE.endsWith('.mjs');

/** Node's arguments that start another Lookout process (`lookout worker`) built as this one is. */
export const ENTRY_ARGS = COMPILED ? ['--enable-source-maps', HERE] : [path.join(ROOT, 'bin', 'lookout.mjs')];

/** A path inside Lookout's folder. */
export function rootPath(...parts: string[]): string {
  return path.join(ROOT, ...parts);
}

/** Lookout's version, as package.json says (a backup records it). */
export const PACKAGE_VERSION = (JSON.parse(fs.readFileSync(rootPath('package.json'), 'utf8')) as { version: string }).version;
