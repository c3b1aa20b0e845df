import type { Db, IndexDescription } from 'mongodb';
import type { InboundFilters } from '../domain/inbound-filters.ts';
import type { Quotas } from '../domain/quotas.ts';
import { isId, slugify } from '../domain/slug.ts';
import { nextId } from './counters.store.ts';
import type { SlugsStore } from './slugs.store.ts';
import { ensureIndexes } from './mongo.ts';

export interface AlertSettings {
  /** failed sign-ins of one (actor, ip) inside the window that raise an issue */
  threshold: number;
  window_seconds: number;
  /** quiet period after an issue is raised, during which bursts update it */
  cooldown_seconds: number;
  /** distinct actors failing from one ip inside the window (credential stuffing) */
  stuffing_threshold: number;
  /** how long a decision made by a burst holds (issue 24); 0: no decisions */
  decision_seconds: number;
  /** `monitor`: bursts raise issues and notifications, but make no decision */
  decision_mode: 'enforce' | 'monitor';
  /** addresses, CIDR ranges and actors a burst never makes a decision for (its issue still says so) */
  allowlist: string[];
  /** a decision for an address that had one within the last 24 hours holds twice as long for each, up to decision_max_seconds */
  escalate: boolean;
  decision_max_seconds: number;
  /** the decision's type per detector, as bouncers read it */
  decision_types: { brute_force: 'ban' | 'captcha'; credential_stuffing: 'ban' | 'captcha' };
}

export const DEFAULT_ALERTS: AlertSettings = {
  threshold: 5,
  window_seconds: 600,
  cooldown_seconds: 1800,
  stuffing_threshold: 10,
  decision_seconds: 3600,
  decision_mode: 'enforce',
  allowlist: [],
  escalate: false,
  decision_max_seconds: 7 * 24 * 3600,
  decision_types: { brute_force: 'ban', credential_stuffing: 'ban' },
};

/** A change of the settings: any of them, the decision types one detector at a time. */
export type AlertsChange = Omit<Partial<AlertSettings>, 'decision_types'> & { decision_types?: Partial<AlertSettings['decision_types']> };

/** A project's settings over the defaults (and a change over those): the decision types per detector merge too. */
export function alertsOf(stored: AlertsChange | undefined, set: AlertsChange = {}): AlertSettings {
  return {
    ...DEFAULT_ALERTS,
    ...stored,
    ...set,
    decision_types: { ...DEFAULT_ALERTS.decision_types, ...stored?.decision_types, ...set.decision_types },
  };
}

export interface Installation {
  instance_id: string;
  base_url: string | null;
  platform: string | null;
  platform_version: string | null;
  terms_version: string | null;
  accepted_by: string | null;
  activated_at: Date;
  last_activated_at: Date;
}

export interface ProjectDoc {
  _id: number;
  org_id: number;
  name: string;
  /** unique in its organisation; what Sentry's web API addresses it by (absent only before migration 002 ran) */
  slug?: string;
  enabled: boolean;
  security_monitoring: boolean;
  public_key: string;
  /** sha256 of the secret key, hex; the key itself is never stored */
  secret_hash: string;
  /** the bound installation's instance_id, null while unbound */
  instance_id: string | null;
  installation: Installation | null;
  alerts: AlertSettings;
  /** days its events are kept; null or missing: EVENT_RETENTION_DAYS */
  event_retention_days?: number | null;
  /** minutes its bound installation may be silent before an issue is raised; null or missing: 30 */
  silent_after_minutes?: number | null;
  /** its quotas and spike protection over the defaults (src/domain/quotas.ts) */
  quotas?: Partial<Quotas>;
  /** its inbound filters over the defaults (src/domain/inbound-filters.ts) */
  filters?: Partial<InboundFilters>;
  created_at: Date;
}

export const projectIndexes: IndexDescription[] = [
  { key: { secret_hash: 1 }, name: 'secret_hash', unique: true },
  { key: { public_key: 1 }, name: 'public_key', unique: true },
  { key: { org_id: 1 }, name: 'org_id' },
];

export function makeProjectsStore(db: Db, slugs: SlugsStore) {
  const projects = db.collection<ProjectDoc>('projects');
  return {
    async ensureIndexes() {
      await ensureIndexes(projects, projectIndexes);
    },
    async create(input: Omit<ProjectDoc, '_id' | 'slug'>): Promise<ProjectDoc> {
      const id = await nextId(db, 'projects');
      const slug = await slugs.claim({ kind: 'project', org: input.org_id }, slugify(input.name, 'project'), id);
      const doc: ProjectDoc = { _id: id, ...input, slug };
      await projects.insertOne(doc);
      return doc;
    },
    get(id: number): Promise<ProjectDoc | null> {
      return projects.findOne({ _id: id });
    },
    /** The organisation's project a path segment names: its id (digits) or its slug. */
    async byIdOrSlug(org: number, segment: string): Promise<ProjectDoc | null> {
      const id = isId(segment) ? Number(segment) : await slugs.find({ kind: 'project', org }, segment.toLowerCase());
      const found = id === null ? null : await projects.findOne({ _id: id });
      return found?.org_id === org ? found : null;
    },
    bySecretHash(hash: string): Promise<ProjectDoc | null> {
      return projects.findOne({ secret_hash: hash });
    },
    byPublicKey(key: string): Promise<ProjectDoc | null> {
      return projects.findOne({ public_key: key });
    },
    inOrg(orgId: number): Promise<ProjectDoc[]> {
      return projects.find({ org_id: orgId }).toArray();
    },
    /** Every project by id, or an organisation's (an operator's listing). */
    list(orgId?: number): Promise<ProjectDoc[]> {
      return projects
        .find(orgId === undefined ? {} : { org_id: orgId })
        .sort({ _id: 1 })
        .toArray();
    },
    async update(id: number, set: Partial<Omit<ProjectDoc, '_id'>>): Promise<ProjectDoc | null> {
      return projects.findOneAndUpdate({ _id: id }, { $set: set }, { returnDocument: 'after' });
    },
    /**
     * Binds the project to `instanceId` unless it is bound to another
     * instance. Returns the project after the update, or null when it is
     * bound elsewhere (or missing).
     */
    async bind(id: number, installation: Installation): Promise<ProjectDoc | null> {
      return projects.findOneAndUpdate(
        { _id: id, instance_id: { $in: [null, installation.instance_id] } },
        { $set: { instance_id: installation.instance_id, installation } },
        { returnDocument: 'after' },
      );
    },
    async unbind(id: number): Promise<ProjectDoc | null> {
      return projects.findOneAndUpdate({ _id: id }, { $set: { instance_id: null, installation: null } }, { returnDocument: 'before' });
    },
  };
}
export type ProjectsStore = ReturnType<typeof makeProjectsStore>;
