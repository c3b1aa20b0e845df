/**
 * Event attachments (issue 46): the files a Sentry SDK sends with an event
 * (`attachment` items: logs, screenshots, minidumps), up to a cap per event.
 * An event's attachments take numbered slots, `_id` `<project>:<event
 * id>:<n>` for n below MAX_PER_EVENT, so listing them is one read by `_id`
 * (`$in`), never a scan. A file over the event's cap keeps its slot without
 * its bytes (`dropped`), so the event says what was not kept.
 */
import crypto from 'node:crypto';
import { Binary, type Db, type IndexDescription } from 'mongodb';
import { ensureIndexes, isDuplicateKey } from './mongo.ts';

/** Most attachments of one event, kept or noted. */
export const MAX_PER_EVENT = 16;
/** Most bytes of attachments kept per event: a log, a screenshot; a larger file is noted, not kept. */
export const EVENT_CAP_BYTES = 1024 * 1024;

export interface AttachmentDoc {
  /** `<project>:<event id>:<slot>` */
  _id: string;
  project_id: number;
  event_id: string;
  slot: number;
  filename: string;
  /** what the SDK said it is (shown, never served as: downloads are application/octet-stream) */
  content_type: string | null;
  /** Sentry's attachment_type: event.attachment, event.minidump, event.view_hierarchy, ... */
  attachment_type: string;
  size: number;
  /** SHA-256 of the bytes: the same file sent again (an SDK's retry) is kept once */
  sha256: string;
  /** the bytes; absent when the file was not kept */
  data?: Binary;
  /** why the bytes were not kept */
  dropped?: 'too_large';
  received_at: Date;
}
export type AttachmentInfo = Omit<AttachmentDoc, 'data'>;

export const attachmentIndexes: IndexDescription[] = [{ key: { received_at: 1 }, name: 'retention' }];

const slotKey = (project: number, eventId: string, slot: number) => `${project}:${eventId}:${slot}`;

export function makeAttachmentsStore(db: Db) {
  const attachments = db.collection<AttachmentDoc>('attachments');
  /** An event's attachments without their bytes, in slot order. */
  async function ofEvent(project: number, eventId: string): Promise<AttachmentInfo[]> {
    const ids = Array.from({ length: MAX_PER_EVENT }, (_, slot) => slotKey(project, eventId, slot));
    const docs = await attachments.find({ _id: { $in: ids } }, { projection: { data: 0 } }).toArray();
    return docs.sort((a, b) => a.slot - b.slot);
  }
  return {
    async ensureIndexes() {
      await ensureIndexes(attachments, attachmentIndexes);
    },
    ofEvent,

    /**
     * Keeps a file of an event in its first free slot, its bytes only while the event's kept files stay within
     * `capBytes`; the same file again changes nothing. Returns what was stored, or null when every slot is taken.
     */
    async add(project: number, eventId: string, file: { filename: string; content_type: string | null; attachment_type: string; data: Buffer }, capBytes: number, now: Date): Promise<AttachmentInfo | null> {
      const sha256 = crypto.createHash('sha256').update(file.data).digest('hex');
      for (let attempt = 0; attempt < MAX_PER_EVENT; attempt++) {
        const held = await ofEvent(project, eventId);
        const same = held.find((a) => a.sha256 === sha256 && a.filename === file.filename);
        if (same) return same;
        const slot = [...Array(MAX_PER_EVENT).keys()].find((n) => !held.some((a) => a.slot === n));
        if (slot === undefined) return null;
        const kept = held.reduce((n, a) => n + (a.dropped ? 0 : a.size), 0);
        const fits = kept + file.data.length <= capBytes;
        const doc: AttachmentDoc = {
          _id: slotKey(project, eventId, slot),
          project_id: project,
          event_id: eventId,
          slot,
          filename: file.filename,
          content_type: file.content_type,
          attachment_type: file.attachment_type,
          size: file.data.length,
          sha256,
          ...(fits ? { data: new Binary(file.data) } : { dropped: 'too_large' as const }),
          received_at: now,
        };
        try {
          await attachments.insertOne(doc);
          const { data: _, ...info } = doc;
          return info;
        } catch (err) {
          if (!isDuplicateKey(err)) throw err; // another request took the slot: look again
        }
      }
      return null;
    },

    /** Deletes the attachments of these events (`<project>:<event id>` keys), as retention deletes the events. */
    async deleteOfEvents(eventKeys: string[]): Promise<void> {
      const ids = eventKeys.flatMap((key) => Array.from({ length: MAX_PER_EVENT }, (_, slot) => `${key}:${slot}`));
      // an $in of up to 1,000 ids is read through the `_id` index on the embedded FerretDB
      for (let i = 0; i < ids.length; i += 1000) await attachments.deleteMany({ _id: { $in: ids.slice(i, i + 1000) } });
    },

    /** One attachment with its bytes, or null. */
    get: (project: number, eventId: string, slot: number) => attachments.findOne({ _id: slotKey(project, eventId, slot) }),
  };
}
export type AttachmentsStore = ReturnType<typeof makeAttachmentsStore>;
