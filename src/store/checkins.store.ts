/**
 * Cron monitors' check-ins and configurations (issue 68).
 *
 * - `checkin_raw`: the check-ins received together, one document per group (`_id` the group's id), each check-in
 *   under its stored id `<group>.<index>`; written after its backlog marker (`checkin_backlog`,
 *   src/store/backlog.ts), so a 202 means stored and a lost job is swept.
 * - `monitors`: each monitor's configuration, `_id` `<project>:<slug>`, made from the first check-in that carries
 *   one (or with none: an unscheduled monitor), or by a person (the CLI, the dashboard).
 * - `checkin_history`: each run as the state machine recorded it (src/domain/monitor-state.ts' CheckInRecord), `_id`
 *   `<project>:<slug>\n<environment>:<started, 15 digits>:<record id>`, so a monitor's runs are one `_id` range in
 *   time order; a record changed later (a run that ends) is written again over itself.
 */
import type { Db } from 'mongodb';
import { MONITOR_DEFAULTS, type CheckIn, type MonitorConfig } from '../domain/checkins.ts';
import type { CheckInRecord } from '../domain/monitor-state.ts';
import { makeBacklog } from './backlog.ts';
import { groupIdsBefore } from '../util/group-commit.ts';
import { isDuplicateKey, sortableMs } from './mongo.ts';

/** One check-in as received: its project and what it said. */
export interface ReceivedCheckIn {
  project_id: number;
  check_in: CheckIn;
}

export interface CheckInGroupDoc {
  _id: string;
  received_at: Date;
  checkins: ReceivedCheckIn[];
}

/** A group as its job carries it. */
export interface JobCheckIns {
  id: string;
  received_at: string;
  checkins?: ReceivedCheckIn[];
}

export interface MonitorDoc {
  _id: string;
  project_id: number;
  slug: string;
  name: string;
  config: MonitorConfig;
  /** paused by a person: check-ins still recorded, nothing missed or raised (src/services/monitors-admin.service.ts) */
  paused?: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface CheckInRecordDoc extends CheckInRecord {
  _id: string;
  project_id: number;
  monitor: string;
  environment: string;
}

/** A monitor's runs, every environment's: the start of their `_id`s; then an environment's. */
const monitorPrefix = (project: number, slug: string) => `${project}:${slug}\n`;
const historyPrefix = (project: number, slug: string, environment: string) => `${monitorPrefix(project, slug)}${environment}:`;

/** A stored check-in's id: its group's and its place there. */
export const storedCheckInId = (group: string, index: number) => `${group}.${index}`;
/** Where a check-in was stored, as a string that sorts in the order check-ins were stored (group ids sort so). */
export const checkInOrder = (group: string, index: number) => `${group}.${String(index).padStart(4, '0')}`;

export function makeCheckInsStore(db: Db) {
  const raw = db.collection<CheckInGroupDoc>('checkin_raw');
  const monitors = db.collection<MonitorDoc>('monitors');
  const backlog = makeBacklog(db, 'checkin_backlog');
  const history = db.collection<CheckInRecordDoc>('checkin_history');

  /**
   * The monitor's configuration once `change` (a check-in's `monitor_config`, null for none) is applied: made on
   * first sight with Sentry's defaults, changed when it differs. Two workers making one monitor at once both end
   * with it.
   */
  async function upsertMonitor(project: number, slug: string, change: Partial<MonitorConfig> | null, now: Date): Promise<MonitorDoc> {
    const _id = `${project}:${slug}`;
    const found = await monitors.findOne({ _id });
    if (!found) {
      const doc: MonitorDoc = { _id, project_id: project, slug, name: slug, config: { ...MONITOR_DEFAULTS, ...change }, created_at: now, updated_at: now };
      try {
        await monitors.insertOne(doc);
        return doc;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        return upsertMonitor(project, slug, change, now);
      }
    }
    const config = { ...found.config, ...change };
    if (JSON.stringify(config) === JSON.stringify(found.config)) return found;
    await monitors.updateOne({ _id }, { $set: { config, updated_at: now } });
    return { ...found, config, updated_at: now };
  }

  return {
    backlog,
    async ensureIndexes() {
      await backlog.ensureIndexes();
    },

    /** The check-ins received together, durably: the backlog marker first, then the group. */
    async insertGroup(checkins: ReceivedCheckIn[]): Promise<JobCheckIns> {
      const { _id } = await backlog.take();
      const received_at = new Date();
      await raw.insertOne({ _id, received_at, checkins });
      return { id: _id, received_at: received_at.toISOString(), checkins };
    },
    /** Groups by id (a swept job carries only ids). */
    ofGroups: (ids: string[]) => raw.find({ _id: { $in: ids } }).toArray(),

    /** A monitor's configuration, or null when none was made. */
    monitor: (project: number, slug: string) => monitors.findOne({ _id: `${project}:${slug}` }),

    upsertMonitor,
    /** Records runs (each written whole over what it was: writing one again changes nothing). */
    async saveRecords(project: number, slug: string, environment: string, records: CheckInRecord[]): Promise<void> {
      if (records.length === 0) return;
      const prefix = historyPrefix(project, slug, environment);
      await history.bulkWrite(
        records.map((r) => {
          const doc: CheckInRecordDoc = { _id: `${prefix}${sortableMs(r.started)}:${r.id}`, project_id: project, monitor: slug, environment, ...r };
          return { replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } };
        }),
        { ordered: true },
      );
    },
    /** A monitor environment's runs that began before `before` (ms) go; how many. */
    async forgetHistory(project: number, slug: string, environment: string, before: number): Promise<number> {
      const prefix = historyPrefix(project, slug, environment);
      return (await history.deleteMany({ _id: { $gte: prefix, $lt: `${prefix}${sortableMs(before)}` } })).deletedCount;
    },
    /** Groups of check-ins received before `before` (applied long since: their ids begin with their time) go; how many. */
    async forgetGroups(before: number): Promise<number> {
      return (await raw.deleteMany({ _id: { $lt: groupIdsBefore(before) } })).deletedCount;
    },
    /** A monitor environment's newest runs, newest first. */
    history: (project: number, slug: string, environment: string, limit: number) => {
      const prefix = historyPrefix(project, slug, environment);
      return history
        .find({ _id: { $gte: prefix, $lt: `${prefix}~` } })
        .sort({ _id: -1 })
        .limit(limit)
        .toArray();
    },
    /** Makes or replaces a monitor's name and configuration (a person's: the CLI, the dashboard). */
    async setMonitor(project: number, slug: string, set: { name: string; config: MonitorConfig }, now: Date): Promise<MonitorDoc> {
      const _id = `${project}:${slug}`;
      await monitors.updateOne({ _id }, { $set: { ...set, updated_at: now }, $setOnInsert: { project_id: project, slug, created_at: now } }, { upsert: true });
      return (await monitors.findOne({ _id }))!;
    },
    async setPaused(project: number, slug: string, paused: boolean, now: Date): Promise<MonitorDoc | null> {
      const _id = `${project}:${slug}`;
      await monitors.updateOne({ _id }, { $set: { paused, updated_at: now } });
      return monitors.findOne({ _id });
    },
    /** Removes a monitor and its history; whether there was one. */
    async removeMonitor(project: number, slug: string): Promise<boolean> {
      const prefix = monitorPrefix(project, slug);
      await history.deleteMany({ _id: { $gte: prefix, $lt: `${prefix}\uffff` } });
      return (await monitors.deleteOne({ _id: `${project}:${slug}` })).deletedCount === 1;
    },
    /** A project's monitors, by slug. */
    monitorsOf: (project: number) => monitors.find({ project_id: project }).sort({ slug: 1 }).toArray(),
  };
}
export type CheckInsStore = ReturnType<typeof makeCheckInsStore>;
