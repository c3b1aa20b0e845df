/**
 * Scheduled backups (`BACKUP_EVERY_HOURS`, off by default): the `maintenance.backup` job writes a backup into
 * `BACKUP_DIR`, reads it back whole (as a restore would check it), keeps the newest `BACKUP_KEEP` and deletes the
 * older ones. A backup that fails, or does not read back, is deleted and notified (`backup.failed`) to every channel
 * that listens for it, in every project: whoever watches Lookout hears of it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log.ts';
import type { Manifest } from './backup-file.ts';
import { verifyBackup } from './backup.ts';

/** A scheduled backup's file name: when it began, sortable as text. */
const NAME = /^lookout-\d{8}T\d{6}Z\.backup$/;
export const scheduledName = (at: Date) => `lookout-${at.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z')}.backup`;

export interface ScheduledDeps {
  dir: string;
  keep: number;
  /** where the embedded FerretDB's binary is built (it unpacks the embedded store's copies) */
  cacheDir: string;
  log: Logger;
  backup: (file: string) => Promise<Manifest & { bytes: number }>;
  /** tells the channels listening for `backup.failed` */
  failed: (reason: string, at: Date) => Promise<void>;
}

export async function scheduledBackup(deps: ScheduledDeps, now: Date): Promise<{ file: string; bytes: number; deleted: string[] }> {
  const file = path.join(deps.dir, scheduledName(now));
  try {
    await fs.promises.mkdir(deps.dir, { recursive: true });
    const { bytes } = await deps.backup(file);
    await verifyBackup(file, deps.cacheDir);
    const kept = (await fs.promises.readdir(deps.dir)).filter((n) => NAME.test(n)).sort().reverse();
    const deleted = kept.slice(deps.keep);
    for (const name of deleted) await fs.promises.rm(path.join(deps.dir, name), { force: true });
    deps.log.info({ file, bytes, deleted: deleted.length }, 'scheduled backup written and read back');
    return { file, bytes, deleted };
  } catch (err) {
    const reason = (err as Error).message;
    await fs.promises.rm(file, { force: true }).catch(() => {}); // none may have been made
    deps.log.error({ file, err: reason }, 'scheduled backup failed');
    await deps.failed(reason, now);
    throw err;
  }
}
