/**
 * Instance-wide settings created once and shared by every process, such as
 * the key that hashes session user ids when DID_HASH_KEY is not configured.
 * Created by an insert on a fixed _id, so concurrent first starts agree.
 */
import type { Db } from 'mongodb';
import { isDuplicateKey } from './mongo.ts';

interface SettingDoc {
  _id: string;
  value: string;
  created_at: Date;
}

export function makeSettingsStore(db: Db) {
  const settings = db.collection<SettingDoc>('settings');
  return {
    /** The stored value, or `make()` stored as it (the first writer wins). */
    async getOrCreate(name: string, make: () => string): Promise<string> {
      const found = await settings.findOne({ _id: name });
      if (found) return found.value;
      const value = make();
      try {
        await settings.insertOne({ _id: name, value, created_at: new Date() });
        return value;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        return (await settings.findOne({ _id: name }))!.value;
      }
    },
  };
}
