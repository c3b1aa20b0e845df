import type { Db } from 'mongodb';
import { isId, slugify } from '../domain/slug.ts';
import { nextId } from './counters.store.ts';
import type { SlugsStore } from './slugs.store.ts';

export type PersonList = 'members' | 'invites' | 'email_rules';

/** Single sign-on through OpenID Connect; the client secret is sealed (src/crypto/sealed.ts). */
export interface SsoSettings {
  issuer: string;
  client_id: string;
  client_secret: string;
  /** lower-cased email domains whose people may sign in, and join, through it */
  domains: string[];
  default_role: 'owner' | 'member';
  /** members may then sign in only through it (owners keep their password, to mend a broken set-up) */
  required: boolean;
}

export interface OrgDoc {
  _id: number;
  name: string;
  /** unique; what Sentry's web API addresses it by (absent only before migration 002 ran) */
  slug?: string;
  plan: string;
  /** null means unlimited */
  seats: number | null;
  /** lower-cased emails */
  members: string[];
  invites: string[];
  email_rules: string[];
  created_at: Date;
  /** owners require two-factor sign-in of every user (absent on organisations made before) */
  require_2fa?: boolean;
  sso?: SsoSettings | null;
}

export function makeOrgsStore(db: Db, slugs: SlugsStore) {
  const orgs = db.collection<OrgDoc>('orgs');
  return {
    async create(input: { name: string; plan: string; seats: number | null }, now: Date): Promise<OrgDoc> {
      const id = await nextId(db, 'orgs');
      const doc: OrgDoc = {
        _id: id,
        ...input,
        slug: await slugs.claim({ kind: 'org' }, slugify(input.name, 'org'), id),
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
    /** The organisation a path segment names: its id (digits) or its slug. */
    async byIdOrSlug(segment: string): Promise<OrgDoc | null> {
      const id = isId(segment) ? Number(segment) : await slugs.find({ kind: 'org' }, segment.toLowerCase());
      return id === null ? null : orgs.findOne({ _id: id });
    },
    /** Every organisation by id (an operator's listing; organisations are few). */
    all(): Promise<OrgDoc[]> {
      return orgs.find({}).sort({ _id: 1 }).toArray();
    },
    /** The organisation whose single sign-on serves an email domain (organisations are few). */
    byDomain(domain: string): Promise<OrgDoc | null> {
      return orgs.findOne({ 'sso.domains': domain });
    },
    async update(id: number, set: Partial<Pick<OrgDoc, 'plan' | 'seats' | 'name' | 'require_2fa' | 'sso'>>): Promise<OrgDoc | null> {
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
