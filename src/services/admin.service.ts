/**
 * What the spec leaves to "the service dashboard": organisations, projects,
 * keys, people and alert settings. The one service behind both the admin CLI
 * and the web dashboard, so each rule is written once.
 */
import { detectBruteForce, detectStuffing, type Attempt, type Detector } from '../domain/bursts.ts';
import { ipv6Prefix64 } from '../domain/ip-prefix.ts';
import { filtersOf, type InboundFilters } from '../domain/inbound-filters.ts';
import { quotasOf, type Quotas } from '../domain/quotas.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { Stores } from '../store/index.ts';
import type { OrgDoc, PersonList } from '../store/orgs.store.ts';
import { makeAllowlist } from '../domain/allowlist.ts';
import { alertsOf, DEFAULT_ALERTS, type AlertsChange, type AlertSettings, type ProjectDoc } from '../store/projects.store.ts';
import { hashSecret, newPublicKey, newSecretKey } from '../crypto/keys.ts';
import type { ProjectChanges } from '../state/project-changes.ts';
import { normalEmail } from './accounts.service.ts';
import type { SdkService } from './sdk.service.ts';
import { union } from '../domain/seats.ts';
import type { Validator } from '../validation/validator.ts';
import { groupBy } from '../util/group-by.ts';

/** How far back the Alerts page's preview looks. */
export const ALERTS_PREVIEW_MS = 24 * 3600 * 1000;

type PreviewAttempt = Omit<Attempt, 'ip'> & { group: string; ip: string | null };

/**
 * How many issues each detector raises from `attempts` under `settings`,
 * grouped as the workers group them (src/services/bursts.service.ts):
 * brute force by (actor, address), stuffing by address and by IPv6 /64
 * (a /64's burst only where two or more of its addresses took part),
 * attempts without an address left out of stuffing.
 */
function burstCounts(attempts: PreviewAttempt[], settings: AlertSettings) {
  const allowlist = makeAllowlist(settings.allowlist);
  const issues = { brute_force: 0, credential_stuffing: 0 };
  let decided = 0;
  const count = (detector: Detector, groups: Map<unknown, PreviewAttempt[]>, opts: { actor: boolean; twoAddresses?: boolean }) => {
    for (const group of groups.values()) {
      const found = (detector === 'brute_force' ? detectBruteForce : detectStuffing)(group as Attempt[], settings).filter(
        (b) => !opts.twoAddresses || new Set(group.filter((a) => a.kind === 'login_failed' && a.at >= b.first_seen && a.at <= b.last_seen).map((a) => a.ip)).size >= 2,
      );
      issues[detector] += found.length;
      if (!group.some((a) => allowlist.allows({ actor: opts.actor ? a.actor : null, ip: a.ip }))) decided += found.length;
    }
  };
  const withIp = attempts.filter((a) => a.ip);
  const inV6 = withIp.filter((a) => ipv6Prefix64(a.ip!));
  count('brute_force', groupBy(attempts, (a) => a.group), { actor: true });
  count('credential_stuffing', groupBy(withIp, (a) => a.ip), { actor: false });
  count('credential_stuffing', groupBy(inV6, (a) => ipv6Prefix64(a.ip!)), { actor: false, twoAddresses: true });
  // Each issue raised makes one decision (later bursts of it extend that one), unless decisions are off, the project
  // only monitors, or its actor or address is allowlisted.
  const deciding = settings.decision_seconds > 0 && settings.decision_mode !== 'monitor';
  return { ...issues, decisions: deciding ? decided : 0 };
}

export function orgView(org: OrgDoc, used?: number) {
  return {
    id: String(org._id),
    name: org.name,
    slug: org.slug ?? null,
    plan: org.plan,
    seats: org.seats,
    members: org.members,
    invites: org.invites,
    email_rules: org.email_rules,
    require_2fa: org.require_2fa === true,
    ...(used === undefined ? {} : { used }),
  };
}

/** A project as an operator may see it: never the secret key or its hash. */
export function projectView(project: ProjectDoc) {
  return {
    id: String(project._id),
    org: String(project.org_id),
    name: project.name,
    slug: project.slug ?? null,
    enabled: project.enabled,
    security_monitoring: project.security_monitoring,
    public_key: project.public_key,
    instance_id: project.instance_id,
    installation: project.installation,
    // Settings added later (decision_seconds) show their default for a project saved before them.
    alerts: alertsOf(project.alerts),
    event_retention_days: project.event_retention_days ?? null,
    silent_after_minutes: project.silent_after_minutes ?? null,
    quotas: quotasOf(project.quotas),
    filters: filtersOf(project.filters),
    created_at: project.created_at,
  };
}

/**
 * Every change to a project's keys, binding, flags or alerts is announced
 * (`changes`) before it answers, so API processes drop their cached key
 * lookups at once.
 */
/** What an owner may change of a project (schemas/project-settings.json). */
export interface ProjectSettings {
  enabled?: boolean;
  security_monitoring?: boolean;
  name?: string;
  event_retention_days?: number | null;
  silent_after_minutes?: number | null;
  quotas?: Partial<Quotas>;
  filters?: Partial<InboundFilters>;
}

export function makeAdminService(stores: Stores, sdk: SdkService, changes: ProjectChanges, validator: Validator) {
  async function org(id: number): Promise<OrgDoc> {
    const found = await stores.orgs.get(id);
    if (!found) throw new NotFoundError('org_not_found', `no organisation ${id}`);
    return found;
  }
  async function project(id: number): Promise<ProjectDoc> {
    const found = await stores.projects.get(id);
    if (!found) throw new NotFoundError('project_not_found', `no project ${id}`);
    return found;
  }
  async function withUsage(doc: OrgDoc) {
    return orgView(doc, (await sdk.seatKeys(doc)).size);
  }
  /** The settings after `set`, checked against schemas/alerts.json (the CLI and the dashboard alike). */
  function mergedAlerts(current: ProjectDoc, set: AlertsChange): AlertSettings {
    validator.check('alerts', set);
    return alertsOf(current.alerts, set);
  }

  return {
    async createOrg(input: { name: string; plan: string; seats: number | null }, now = new Date()) {
      return withUsage(await stores.orgs.create(input, now));
    },
    async setOrg(id: number, set: { plan?: string; seats?: number | null; name?: string; require_2fa?: boolean }) {
      await org(id);
      if (Object.keys(set).length === 0) throw new BadRequestError('nothing_to_set', 'name at least one setting');
      const updated = await stores.orgs.update(id, set);
      return withUsage(updated ?? (await org(id)));
    },
    /** Organisations without their people lists (org show has them). */
    async listOrgs() {
      return (await stores.orgs.all()).map((o) => ({ id: String(o._id), name: o.name, slug: o.slug ?? null, plan: o.plan, seats: o.seats, created_at: o.created_at }));
    },
    async listProjects(orgId?: number) {
      if (orgId !== undefined) await org(orgId);
      return (await stores.projects.list(orgId)).map(projectView);
    },
    async showOrg(id: number) {
      return withUsage(await org(id));
    },
    /** The organisation with who fills its seats: `used` counts each person once, each list's own size beside it. */
    async showOrgUsage(id: number) {
      const doc = await org(id);
      const lists = await sdk.seatLists(doc);
      const used = union(...Object.values(lists)).size;
      const usage = { used, contacts: lists.contacts.size, members: lists.members.size, invites: lists.invites.size, email_rules: lists.email_rules.size };
      return { ...orgView(doc, used), usage };
    },
    async person(id: number, list: PersonList, action: 'add' | 'remove', email: string) {
      await org(id);
      const normal = normalEmail(email);
      const updated = action === 'add' ? await stores.orgs.addPerson(id, list, normal) : await stores.orgs.removePerson(id, list, normal);
      return withUsage(updated ?? (await org(id)));
    },

    async createProject(input: { org: number; name: string; securityMonitoring: boolean }, now = new Date()) {
      await org(input.org);
      const secretKey = newSecretKey();
      const created = await stores.projects.create({
        org_id: input.org,
        name: input.name,
        enabled: true,
        security_monitoring: input.securityMonitoring,
        public_key: newPublicKey(),
        secret_hash: hashSecret(secretKey),
        instance_id: null,
        installation: null,
        alerts: { ...DEFAULT_ALERTS },
        created_at: now,
      });
      // The only moment the secret key is shown, apart from a rotation.
      return { id: String(created._id), org: String(created.org_id), name: created.name, slug: created.slug, public_key: created.public_key, secret_key: secretKey };
    },
    async showProject(id: number) {
      return projectView(await project(id));
    },
    /** A project of one organisation: another organisation's project is not found, as if it did not exist. */
    async projectOf(orgId: number, id: number) {
      const found = await stores.projects.get(id);
      if (!found || found.org_id !== orgId) throw new NotFoundError('project_not_found', `no project ${id}`);
      return projectView(found);
    },
    async setProject(id: number, set: ProjectSettings) {
      const current = await project(id);
      if (Object.keys(set).length === 0) throw new BadRequestError('nothing_to_set', 'name at least one setting');
      validator.check('project-settings', set); // the CLI's settings as the dashboard's
      // quotas and filters change field by field, over what the project had
      const { quotas, filters, ...rest } = set;
      const update: Partial<ProjectDoc> = { ...rest };
      if (quotas) update.quotas = { ...current.quotas, ...quotas };
      if (filters) update.filters = { ...current.filters, ...filters };
      const updated = (await stores.projects.update(id, update)) ?? (await project(id));
      await changes.publish(id);
      return projectView(updated);
    },
    async rotateKey(id: number, kind: 'secret' | 'public') {
      await project(id);
      if (kind === 'public') {
        const updated = await stores.projects.update(id, { public_key: newPublicKey() });
        await changes.publish(id);
        return { id: String(id), public_key: updated!.public_key };
      }
      const secretKey = newSecretKey();
      await stores.projects.update(id, { secret_hash: hashSecret(secretKey) });
      await changes.publish(id);
      return { id: String(id), secret_key: secretKey };
    },
    /** Frees the project and its installation so either can be activated again. */
    async unbind(id: number) {
      await project(id);
      const before = await stores.projects.unbind(id);
      if (before?.instance_id) await stores.bindings.release(before.instance_id, id);
      await changes.publish(id);
      return { id: String(id), unbound: before?.instance_id ?? null };
    },
    async setAlerts(id: number, set: AlertsChange) {
      const alerts = mergedAlerts(await project(id), set);
      const updated = await stores.projects.update(id, { alerts });
      await changes.publish(id);
      return projectView(updated!);
    },
    /**
     * What `set` would have raised from the sign-in attempts of the last 24
     * hours, beside what the current settings raise from the same attempts
     * (the same pure detectors the workers' scripts are checked against).
     */
    async previewAlerts(id: number, set: AlertsChange, now = new Date()) {
      const current = await project(id);
      const proposed = mergedAlerts(current, set);
      const since = new Date(now.getTime() - ALERTS_PREVIEW_MS);
      const attempts = [];
      const seen = new Set<string>(); // an attempt being repacked is in its group's document and its part for a moment
      for await (const chunk of stores.events.attemptsSince(id, since)) {
        for (const e of chunk) {
          if (seen.has(e.event_id)) continue;
          seen.add(e.event_id);
          if (e.at.getTime() <= now.getTime())
            attempts.push({ id: e.event_id, at: e.at.getTime(), kind: e.security_kind, actor: e.actor ?? '', group: e.group_key, ip: e.ip });
        }
      }
      const settings = alertsOf(current.alerts);
      return {
        since: since.toISOString(),
        until: now.toISOString(),
        attempts: attempts.length,
        current: { settings, ...burstCounts(attempts, settings) },
        proposed: { settings: proposed, ...burstCounts(attempts, proposed) },
      };
    },
  };
}
export type AdminService = ReturnType<typeof makeAdminService>;
