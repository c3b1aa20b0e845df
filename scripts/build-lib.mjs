// What the dashboard's and the server's builds share: whether a build is older than its sources, and a build made
// in a staging folder that replaces the last one by renames, so a process starting meanwhile reads one whole build
// or the other.
import fs from 'node:fs';
import path from 'node:path';

/** The newest modification time (ms) among `files` and the files under `dirs` that `keep` accepts. */
export function newestSource(files, dirs, keep = () => true) {
  const inputs = [...files];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (keep(entry.name)) inputs.push(full);
    }
  };
  for (const dir of dirs) walk(dir);
  return Math.max(...inputs.map((f) => fs.statSync(f).mtimeMs));
}

/** Whether `built` (a file of the last build) exists and is no older than the sources. */
export function upToDate(built, sources) {
  return fs.existsSync(built) && fs.statSync(built).mtimeMs >= sources;
}

/** Runs `make(staging)` in a fresh folder beside `out` (readable by all), then puts it in `out`'s place. */
export async function buildInto(out, make) {
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const staging = fs.mkdtempSync(path.join(path.dirname(out), `.${path.basename(out)}-`));
  fs.chmodSync(staging, 0o755);
  try {
    const result = await make(staging);
    const old = `${out}.old-${process.pid}`;
    if (fs.existsSync(out)) fs.renameSync(out, old);
    fs.renameSync(staging, out);
    fs.rmSync(old, { recursive: true, force: true });
    return result;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}
