/**
 * Notification channels, a few per project: where a project's notifications
 * go (a webhook URL or an email address), on which triggers, through which
 * filters. A webhook's signing secret is kept as it is (it signs every
 * delivery) and shown only when the channel is added or its secret rotated.
 */
import type { Db, IndexDescription } from 'mongodb';
import type { ChannelRules } from '../domain/notifications.ts';
import { nextId } from './counters.store.ts';
import { ensureIndexes } from './mongo.ts';

export interface ChannelDoc extends ChannelRules {
  _id: number;
  project_id: number;
  kind: 'webhook' | 'email';
  /** the webhook's URL, or null for email */
  url: string | null;
  /** the email address, or null for a webhook */
  email: string | null;
  /** a webhook's body: Lookout's JSON or Slack-compatible */
  format: 'json' | 'slack';
  /** a webhook's signing secret; null for email */
  secret: string | null;
  /** set when ten deliveries in a row failed; nothing is sent until an owner resumes it */
  paused_at: Date | null;
  created_at: Date;
}

export const channelIndexes: IndexDescription[] = [{ key: { project_id: 1 }, name: 'project_id' }];

export function makeChannelsStore(db: Db) {
  const channels = db.collection<ChannelDoc>('channels');
  return {
    async ensureIndexes() {
      await ensureIndexes(channels, channelIndexes);
    },
    async create(input: Omit<ChannelDoc, '_id'>): Promise<ChannelDoc> {
      const doc: ChannelDoc = { _id: await nextId(db, 'channels'), ...input };
      await channels.insertOne(doc);
      return doc;
    },
    get(id: number): Promise<ChannelDoc | null> {
      return channels.findOne({ _id: id });
    },
    ofProject(project: number): Promise<ChannelDoc[]> {
      return channels.find({ project_id: project }).sort({ _id: 1 }).toArray();
    },
    async update(id: number, set: Partial<Omit<ChannelDoc, '_id' | 'project_id'>>): Promise<ChannelDoc | null> {
      return channels.findOneAndUpdate({ _id: id }, { $set: set }, { returnDocument: 'after' });
    },
    async remove(project: number, id: number): Promise<boolean> {
      return (await channels.deleteOne({ _id: id, project_id: project })).deletedCount === 1;
    },
  };
}
export type ChannelsStore = ReturnType<typeof makeChannelsStore>;
