/**
 * Go programs of `tools/` (the embedded FerretDB, bench:storm's load generator), each built once into the cache
 * folder under a name stamped with its sources' hash, so that a change to them builds it again.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { StartError } from './instance.ts';

/** Go's path; `what` names the program it is needed for, `otherwise` what the user can do instead of installing it. */
function findGo(what: string, otherwise: string): string {
  const found = spawnSync('sh', ['-c', 'command -v go'], { encoding: 'utf8' });
  if (found.status === 0 && found.stdout.trim()) return found.stdout.trim();
  if (fs.existsSync('/usr/local/go/bin/go')) return '/usr/local/go/bin/go';
  throw new StartError(`Go is needed once to build ${what}, and none was found. Install Go 1.22+${otherwise}.`);
}

/** What a build is given: Go, its environment (no cgo, no VCS stamp, the local toolchain), where to write, the stamp. */
export interface GoBuild {
  go: string;
  env: NodeJS.ProcessEnv;
  out: string;
  stamp: string;
}

/**
 * The path of `<cacheDir>/bin/<name>-<stamp>`, `build` run first when it is missing: it writes the binary to `out`
 * (renamed into place once whole) or throws. Without Go, the error names `what` is built and `otherwise`.
 */
export function builtOnce(cacheDir: string, name: string, sources: string[], build: (b: GoBuild) => void, missingGo: { what: string; otherwise?: string }): string {
  const hash = crypto.createHash('sha256');
  for (const file of sources) hash.update(fs.readFileSync(file));
  const stamp = hash.digest('hex').slice(0, 16);
  const binary = path.resolve(cacheDir, 'bin', `${name}-${stamp}`);
  if (fs.existsSync(binary)) return binary;
  fs.mkdirSync(path.dirname(binary), { recursive: true });
  build({ go: findGo(missingGo.what, missingGo.otherwise ?? ''), env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false', GOTOOLCHAIN: 'local' }, out: `${binary}.tmp`, stamp });
  fs.renameSync(`${binary}.tmp`, binary);
  return binary;
}
