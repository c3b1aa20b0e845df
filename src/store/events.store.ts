/**
 * Raw events, one document per (project, event_id): the _id is
 * `<project>:<event_id>`, so the store itself refuses a duplicate for as long
 * as the event is retained. After the insert a document is written only by
 * the job that processes it (`processed`), never concurrently: FerretDB v1
 * loses concurrent updates to one document. Which issues an event belongs to
 * is kept in the insert-only `issue_events` collection for the same reason.
 */
import type { Db, IndexDescription } from 'mongodb';
import { ensureIndexes, isDuplicateKey, onlyDuplicates } from './mongo.ts';

export interface EventDoc {
  _id: string;
  project_id: number;
  event_id: string;
  kind: 'security' | 'error';
  /** security events: login_failed, login_succeeded, … */
  security_kind: string | null;
  /** security events: actor or actor_id */
  actor: string | null;
  ip: string | null;
  /** security events: `<actor>|<ip>` */
  group_key: string | null;
  fingerprint: string | null;
  release: string | null;
  at: Date;
  received_at: Date;
  payload: Record<string, unknown>;
  processed: boolean;
}

/** Membership of an event in an issue; _id `<issue>:<event doc _id>` makes it idempotent. */
export interface IssueEventDoc {
  _id: string;
  issue_id: number;
  event: string;
  at: Date;
}

export const eventIndexes: IndexDescription[] = [
  { key: { project_id: 1, group_key: 1, at: 1 }, name: 'group_at' },
  { key: { project_id: 1, ip: 1, at: 1 }, name: 'ip_at' },
  { key: { processed: 1, received_at: 1 }, name: 'unprocessed' },
];
export const issueEventIndexes: IndexDescription[] = [{ key: { issue_id: 1, at: -1 }, name: 'issue_at' }];

export function eventKey(projectId: number, eventId: string): string {
  return `${projectId}:${eventId}`;
}

export function makeEventsStore(db: Db) {
  const events = db.collection<EventDoc>('events');
  const issueEvents = db.collection<IssueEventDoc>('issue_events');
  const attemptFields = { projection: { _id: 1, event_id: 1, at: 1, security_kind: 1, actor: 1, group_key: 1, ip: 1 } } as const;
  return {
    collection: events,
    async ensureIndexes() {
      await ensureIndexes(events, eventIndexes);
      await ensureIndexes(issueEvents, issueEventIndexes);
    },
    /** Journaled insert; `duplicate` when this project already has the event_id. */
    async insert(doc: EventDoc): Promise<'inserted' | 'duplicate'> {
      try {
        await events.insertOne(doc);
        return 'inserted';
      } catch (err) {
        if (isDuplicateKey(err)) return 'duplicate';
        throw err;
      }
    },
    get(id: string): Promise<EventDoc | null> {
      return events.findOne({ _id: id });
    },
    async markProcessed(id: string): Promise<void> {
      await events.updateOne({ _id: id }, { $set: { processed: true } });
    },
    /** When the oldest event still waiting for its job was received (null: none waits). */
    async oldestUnprocessed(): Promise<Date | null> {
      const [oldest] = await events.find({ processed: false }, { projection: { received_at: 1 } }).sort({ received_at: 1 }).limit(1).toArray();
      return oldest?.received_at ?? null;
    },
    /** Events stored before `olderThan` whose job has not finished (or was never enqueued). */
    unprocessed(olderThan: Date, limit: number): Promise<Pick<EventDoc, '_id'>[]> {
      return events.find({ processed: false, received_at: { $lt: olderThan } }, { projection: { _id: 1 } }).limit(limit).toArray();
    },
    async attach(members: { id: string; at: Date }[], issueId: number): Promise<void> {
      if (members.length === 0) return;
      const docs = members.map((m) => ({ _id: `${issueId}:${m.id}`, issue_id: issueId, event: m.id, at: m.at }));
      try {
        await issueEvents.insertMany(docs, { ordered: false });
      } catch (err) {
        // Members attached before (a retry, or another worker) are duplicates: the set is what counts.
        if (!onlyDuplicates(err)) throw err;
      }
    },
    countForIssue(issueId: number): Promise<number> {
      return issueEvents.countDocuments({ issue_id: issueId });
    },
    async latestForIssue(issueId: number): Promise<EventDoc | null> {
      const member = await issueEvents.find({ issue_id: issueId }).sort({ at: -1, _id: -1 }).limit(1).next();
      return member ? events.findOne({ _id: member.event }) : null;
    },
    /**
     * The attempts both detectors read for one sign-in attempt: those of its
     * (actor, ip) group and those from its ip, since `since`, oldest first.
     * One query, not two: on FerretDB v1 each query scans the collection.
     */
    async attempts(projectId: number, groupKey: string, ip: string | null, since: Date, limit: number) {
      // Each branch is a whole indexed predicate (group_at, ip_at), so MongoDB serves the $or from both indexes.
      const group = { project_id: projectId, group_key: groupKey, at: { $gte: since } };
      const filter = ip === null ? group : { $or: [group, { project_id: projectId, ip, at: { $gte: since } }] };
      const docs = await events.find(filter, attemptFields).sort({ at: 1 }).limit(2 * limit).toArray();
      return {
        group: docs.filter((d) => d.group_key === groupKey).slice(0, limit),
        fromIp: ip === null ? [] : docs.filter((d) => d.ip === ip).slice(0, limit),
      };
    },
  };
}
export type EventsStore = ReturnType<typeof makeEventsStore>;
