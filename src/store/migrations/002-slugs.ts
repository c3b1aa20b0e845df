/**
 * Organisations and projects made before slugs (issue 52) get one from their name, as a new one does; a slug one
 * already has is kept. Run twice, the second finds each claim its own.
 */
import type { Db } from 'mongodb';
import { slugify } from '../../domain/slug.ts';
import { makeSlugsStore } from '../slugs.store.ts';

export async function up(db: Db): Promise<void> {
  const slugs = makeSlugsStore(db);
  const orgs = db.collection<{ _id: number; name: string; slug?: string }>('orgs');
  for (const org of await orgs.find({ slug: { $exists: false } }).sort({ _id: 1 }).toArray()) {
    await orgs.updateOne({ _id: org._id }, { $set: { slug: await slugs.claim({ kind: 'org' }, slugify(org.name, 'org'), org._id) } });
  }
  const projects = db.collection<{ _id: number; org_id: number; name: string; slug?: string }>('projects');
  for (const p of await projects.find({ slug: { $exists: false } }).sort({ _id: 1 }).toArray()) {
    await projects.updateOne({ _id: p._id }, { $set: { slug: await slugs.claim({ kind: 'project', org: p.org_id }, slugify(p.name, 'project'), p._id) } });
  }
}
