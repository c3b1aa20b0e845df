/**
 * Dashboard users: an organisation's members with a role. `_id` is the email
 * (lowercased), a string, so FerretDB finds a user through its `_id` index.
 * Only hashes are stored: the password's (scrypt) and, until it is used, the
 * one-time set-password token's (SHA-256).
 */
import type { Db } from 'mongodb';

export type Role = 'owner' | 'member';

export interface UserDoc {
  _id: string;
  org_id: number;
  role: Role;
  password_hash: string | null;
  setup_hash: string | null;
  setup_expires: Date | null;
  created_at: Date;
}

export function makeUsersStore(db: Db) {
  const users = db.collection<UserDoc>('users');
  return {
    /** Inserts; a user that exists already is a duplicate-key error. */
    async create(doc: UserDoc): Promise<void> {
      await users.insertOne(doc);
    },
    get(email: string): Promise<UserDoc | null> {
      return users.findOne({ _id: email });
    },
    /** An organisation's users, by email (the Organisation page: a rare read by a secondary field). */
    ofOrg(orgId: number): Promise<UserDoc[]> {
      return users.find({ org_id: orgId }).sort({ _id: 1 }).toArray();
    },
    /** The user a set-password token was issued to (a rare read by a secondary field). */
    bySetupHash(hash: string): Promise<UserDoc | null> {
      return users.findOne({ setup_hash: hash });
    },
    /** Deletes a user of an organisation; false when there was none. */
    async remove(orgId: number, email: string): Promise<boolean> {
      return (await users.deleteOne({ _id: email, org_id: orgId })).deletedCount === 1;
    },
    async setPassword(email: string, passwordHash: string): Promise<void> {
      await users.updateOne({ _id: email }, { $set: { password_hash: passwordHash, setup_hash: null, setup_expires: null } });
    },
  };
}
export type UsersStore = ReturnType<typeof makeUsersStore>;
