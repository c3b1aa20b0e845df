/**
 * Slugs of organisations (unique) and of projects (unique within their organisation), each held by a document whose
 * `_id` is the slug in its scope (`org:acme`, `project:3:shop`): claiming one is an insert, so two made at once
 * cannot take the same slug, and finding what a slug names is a read by `_id`.
 */
import crypto from 'node:crypto';
import type { Db } from 'mongodb';
import { slugAttempt } from '../domain/slug.ts';
import { isDuplicateKey } from './mongo.ts';

interface SlugDoc {
  _id: string;
  /** the organisation's or project's id */
  target: number;
}

export type SlugScope = { kind: 'org' } | { kind: 'project'; org: number };

const keyOf = (scope: SlugScope, slug: string) => (scope.kind === 'org' ? `org:${slug}` : `project:${scope.org}:${slug}`);

export function makeSlugsStore(db: Db) {
  const slugs = db.collection<SlugDoc>('slugs');
  return {
    /** Claims the first free slug from `base` (`base`, `base-2`, `base-3`, then a random suffix) for `target`; one it already holds is kept. */
    async claim(scope: SlugScope, base: string, target: number): Promise<string> {
      for (let n = 0; n < 100; n++) {
        const slug = slugAttempt(base, n, crypto.randomBytes(4).readUInt32BE(0).toString(36));
        try {
          await slugs.insertOne({ _id: keyOf(scope, slug), target });
          return slug;
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
          if ((await slugs.findOne({ _id: keyOf(scope, slug) }))?.target === target) return slug;
        }
      }
      throw new Error(`no free slug from ${base}`);
    },
    /** The id a slug names in its scope, or null. */
    async find(scope: SlugScope, slug: string): Promise<number | null> {
      return (await slugs.findOne({ _id: keyOf(scope, slug) }))?.target ?? null;
    },
  };
}
export type SlugsStore = ReturnType<typeof makeSlugsStore>;
