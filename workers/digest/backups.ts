/**
 * `maintenance.backup` (every `BACKUP_EVERY_HOURS`, when set): a scheduled backup (src/backup/scheduled.ts); a failure
 * raises `backup.failed` on each channel that listens for it, once an hour at most per channel.
 */
import { backup, backupDepsOf } from '../../src/backup/backup.ts';
import { scheduledBackup } from '../../src/backup/scheduled.ts';
import type { Runtime } from '../../src/runtime.ts';

const NOTIFY_HOLD_MS = 3600_000;

export function runScheduledBackup(runtime: Runtime, now: Date) {
  const { dir, keep } = runtime.config.backups;
  return scheduledBackup(
    {
      dir,
      keep,
      cacheDir: runtime.config.cacheDir,
      log: runtime.log,
      backup: (file) => backup(backupDepsOf(runtime), file, { withoutEvents: false }),
      async failed(reason, at) {
        for (const { _id: project } of await runtime.stores.projects.list()) {
          const listening = (await runtime.channels(project)).filter((c) => c.on.includes('backup.failed'));
          for (const channel of listening) {
            await runtime.notify.raise(project, channel._id, 'backup', NOTIFY_HOLD_MS, { event: 'backup.failed', at: at.getTime(), channel: channel._id, reason, dir });
          }
          if (listening.length > 0) await runtime.notify.markProject(project);
        }
      },
    },
    now,
  );
}
