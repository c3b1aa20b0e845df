/**
 * The performance rule's clock (issue 69): once a minute, each project with a channel on performance.regressed has
 * its transaction groups read over each channel's window and checked (src/notify/rules.ts' checkPerformance); a
 * project that raised something is marked for the dispatcher. Several workers may run it: a trigger is raised once
 * per channel and group (the notify state's mark), whoever checks first.
 */
import type { Logger } from '../log.ts';
import type { PerformanceService } from '../services/performance.service.ts';
import type { ChannelDoc } from '../store/channels.store.ts';
import { makeTicker } from '../util/ticker.ts';
import type { NotifyState } from './notify.state.ts';
import { checkPerformance } from './rules.ts';

export function startPerfAlerts(deps: {
  notify: NotifyState;
  performance: Pick<PerformanceService, 'groups'>;
  projectIds: () => Promise<number[]>;
  channels: (project: number) => Promise<ChannelDoc[]>;
  log: Logger;
  everyMs?: number;
}) {
  async function pass(): Promise<void> {
    const now = new Date();
    for (const project of await deps.projectIds()) {
      const channels = await deps.channels(project);
      if (!channels.some((c) => c.on.includes('performance.regressed'))) continue;
      const groupsOf = (minutes: number, environment: string | null) =>
        deps.performance.groups(project, { from: now.getTime() - minutes * 60_000, to: now.getTime() + 1 }, environment ? { environment } : {});
      if (await checkPerformance(deps.notify, project, channels, groupsOf, now)) await deps.notify.markProject(project);
    }
  }
  const ticker = makeTicker(pass, (err) => deps.log.warn({ err: err.message }, 'performance rules failed; the next minute tries again'), deps.everyMs ?? 60_000);
  ticker.start();
  return ticker;
}
