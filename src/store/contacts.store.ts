/** The contact list each project's installation reports, one document per project. */
import type { Db, IndexDescription } from 'mongodb';
import { ensureIndexes } from './mongo.ts';

export interface ContactCompany {
  id: string;
  name: string | null;
  people: { id: string; name: string | null; email: string | null }[];
}

export interface ContactsDoc {
  _id: number;
  org_id: number;
  companies: ContactCompany[];
  updated_at: Date;
}

export const contactIndexes: IndexDescription[] = [{ key: { org_id: 1 }, name: 'org_id' }];

export function makeContactsStore(db: Db) {
  const contacts = db.collection<ContactsDoc>('contacts');
  return {
    async ensureIndexes() {
      await ensureIndexes(contacts, contactIndexes);
    },
    inOrg(orgId: number): Promise<ContactsDoc[]> {
      return contacts.find({ org_id: orgId }).toArray();
    },
    async replace(doc: ContactsDoc): Promise<void> {
      await contacts.replaceOne({ _id: doc._id }, doc, { upsert: true });
    },
  };
}
export type ContactsStore = ReturnType<typeof makeContactsStore>;
