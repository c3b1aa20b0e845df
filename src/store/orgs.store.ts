import type { Db } from 'mongodb';
import { nextId } from './counters.store.ts';

export type PersonList = 'members' | 'invites' | 'email_rules';

export interface OrgDoc {
  _id: number;
  name: string;
  plan: string;
  /** null means unlimited */
  seats: number | null;
  /** lower-cased emails */
  members: string[];
  invites: string[];
  email_rules: string[];
  created_at: Date;
}

export function makeOrgsStore(db: Db) {
  const orgs = db.collection<OrgDoc>('orgs');
  return {
    async create(input: { name: string; plan: string; seats: number | null }, now: Date): Promise<OrgDoc> {
      const doc: OrgDoc = {
        _id: await nextId(db, 'orgs'),
        ...input,
        members: [],
        invites: [],
        email_rules: [],
        created_at: now,
      };
      await orgs.insertOne(doc);
      return doc;
    },
    get(id: number): Promise<OrgDoc | null> {
      return orgs.findOne({ _id: id });
    },
    /** Every organisation by id (an operator's listing; organisations are few). */
    all(): Promise<OrgDoc[]> {
      return orgs.find({}).sort({ _id: 1 }).toArray();
    },
    async update(id: number, set: Partial<Pick<OrgDoc, 'plan' | 'seats' | 'name'>>): Promise<OrgDoc | null> {
      return orgs.findOneAndUpdate({ _id: id }, { $set: set }, { returnDocument: 'after' });
    },
    async addPerson(id: number, list: PersonList, email: string): Promise<OrgDoc | null> {
      return orgs.findOneAndUpdate({ _id: id }, { $addToSet: { [list]: email } }, { returnDocument: 'after' });
    },
    async removePerson(id: number, list: PersonList, email: string): Promise<OrgDoc | null> {
      return orgs.findOneAndUpdate({ _id: id }, { $pull: { [list]: email } }, { returnDocument: 'after' });
    },
  };
}
export type OrgsStore = ReturnType<typeof makeOrgsStore>;
