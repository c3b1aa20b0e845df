/**
 * Dashboard users: an organisation's members with a role. `_id` is the email
 * (lowercased), a string, so FerretDB finds a user through its `_id` index.
 * Only hashes are stored: the password's (scrypt), the one-time set-password
 * token's and the recovery codes' (SHA-256). The TOTP seed, which must be read
 * back, is sealed (src/crypto/sealed.ts).
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
  /** set while an operator has disabled the account (absent on accounts made before) */
  disabled_at?: Date | null;
  last_sign_in?: Date | null;
  /** two-factor sign-in: the sealed TOTP seed once enrolled, and the hashes of unused recovery codes */
  totp?: { seed: string; enabled_at: Date } | null;
  /** a seed offered at enrolment, until a code from it confirms it */
  totp_pending?: string | null;
  recovery_hashes?: string[];
  /** how the account was made: 'sso' for just-in-time members of single sign-on */
  source?: 'password' | 'sso';
}

export function makeUsersStore(db: Db) {
  const users = db.collection<UserDoc>('users');
  const set = async (email: string, fields: Partial<UserDoc>) => {
    await users.updateOne({ _id: email }, { $set: fields });
  };
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
      await set(email, { password_hash: passwordHash, setup_hash: null, setup_expires: null });
    },
    /** Disables (a date) or enables (null) a user of an organisation; false when there is none. */
    async setDisabled(orgId: number, email: string, at: Date | null): Promise<boolean> {
      return (await users.updateOne({ _id: email, org_id: orgId }, { $set: { disabled_at: at } })).matchedCount === 1;
    },
    signedIn: (email: string, at: Date) => set(email, { last_sign_in: at }),
    offerTotp: (email: string, sealedSeed: string) => set(email, { totp_pending: sealedSeed }),
    enableTotp: (email: string, sealedSeed: string, recoveryHashes: string[], at: Date) =>
      set(email, { totp: { seed: sealedSeed, enabled_at: at }, totp_pending: null, recovery_hashes: recoveryHashes }),
    disableTotp: (email: string) => set(email, { totp: null, totp_pending: null, recovery_hashes: [] }),
    /** Takes one recovery code out; false when it was not there (used already, or never issued). */
    async takeRecoveryCode(email: string, hash: string): Promise<boolean> {
      return (await users.updateOne({ _id: email, recovery_hashes: hash }, { $pull: { recovery_hashes: hash } })).modifiedCount === 1;
    },
  };
}
export type UsersStore = ReturnType<typeof makeUsersStore>;
