/**
 * Incidents recorded in their issues (src/domain/incidents.ts): the issue numbered by its fingerprint, the change
 * applied once by its id (apply-incident-3.lua, with the notification it raises), what it did to the issue's status
 * written to its activity, and the project marked for the notification dispatcher.
 */
import type { IncidentChange } from '../domain/incidents.ts';
import type { NotifyState } from '../notify/notify.state.ts';
import { notifyFlags } from '../notify/rules.ts';
import type { IssuesState } from '../state/issues.state.ts';
import type { StateKeeper } from '../state/rebuild.ts';
import type { ActivityStore } from '../store/activity.store.ts';
import type { ChannelDoc } from '../store/channels.store.ts';

export interface IncidentsDeps {
  issuesState: IssuesState;
  keeper: StateKeeper;
  activity: ActivityStore;
  channels: (project: number) => Promise<ChannelDoc[]>;
  notify: NotifyState;
}

export function makeIncidentsService(deps: IncidentsDeps) {
  return {
    /** Records one change; recording it again changes nothing. */
    async record(project: number, change: IncidentChange, now: Date): Promise<void> {
      const issue = (await deps.issuesState.issueIds(project, [change.fingerprint])).get(change.fingerprint)!;
      const notify = notifyFlags(await deps.channels(project)) !== '';
      const { code, changes } = await deps.keeper.withVerified(project, now, 'an incident', () => deps.issuesState.applyIncident(project, issue, change, notify));
      if (code !== 'applied') return;
      await deps.activity.changes(project, changes);
      if (change.change === 'recovered') {
        await deps.activity.add(project, issue, { at: new Date(change.at), kind: 'status', by: null, data: { status: 'resolved', reason: 'recovered' } });
      }
      if (notify && change.trigger) await deps.notify.markProject(project);
    },
  };
}
export type IncidentsService = ReturnType<typeof makeIncidentsService>;
