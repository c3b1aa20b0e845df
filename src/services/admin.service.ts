/**
 * What the spec leaves to "the service dashboard": organisations, projects,
 * keys, people and alert settings. Used by the admin CLI (and by tests).
 */
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { Stores } from '../store/index.ts';
import type { OrgDoc, PersonList } from '../store/orgs.store.ts';
import { DEFAULT_ALERTS, type AlertSettings, type ProjectDoc } from '../store/projects.store.ts';
import { hashSecret, newPublicKey, newSecretKey } from './keys.ts';
import type { ProjectChanges } from '../state/project-changes.ts';
import type { SdkService } from './sdk.service.ts';

export function orgView(org: OrgDoc, used?: number) {
  return {
    id: String(org._id),
    name: org.name,
    plan: org.plan,
    seats: org.seats,
    members: org.members,
    invites: org.invites,
    email_rules: org.email_rules,
    ...(used === undefined ? {} : { used }),
  };
}

/** A project as an operator may see it: never the secret key or its hash. */
export function projectView(project: ProjectDoc) {
  return {
    id: String(project._id),
    org: String(project.org_id),
    name: project.name,
    enabled: project.enabled,
    security_monitoring: project.security_monitoring,
    public_key: project.public_key,
    instance_id: project.instance_id,
    installation: project.installation,
    alerts: project.alerts,
    created_at: project.created_at,
  };
}

/**
 * Every change to a project's keys, binding, flags or alerts is announced
 * (`changes`) before it answers, so API processes drop their cached key
 * lookups at once.
 */
export function makeAdminService(stores: Stores, sdk: SdkService, changes: ProjectChanges) {
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

  return {
    async createOrg(input: { name: string; plan: string; seats: number | null }, now = new Date()) {
      return withUsage(await stores.orgs.create(input, now));
    },
    async setOrg(id: number, set: { plan?: string; seats?: number | null; name?: string }) {
      await org(id);
      if (Object.keys(set).length === 0) throw new BadRequestError('nothing_to_set', 'name at least one setting');
      const updated = await stores.orgs.update(id, set);
      return withUsage(updated ?? (await org(id)));
    },
    /** Organisations without their people lists (org show has them). */
    async listOrgs() {
      return (await stores.orgs.all()).map((o) => ({ id: String(o._id), name: o.name, plan: o.plan, seats: o.seats, created_at: o.created_at }));
    },
    async listProjects(orgId?: number) {
      if (orgId !== undefined) await org(orgId);
      return (await stores.projects.list(orgId)).map(projectView);
    },
    async showOrg(id: number) {
      return withUsage(await org(id));
    },
    async person(id: number, list: PersonList, action: 'add' | 'remove', email: string) {
      await org(id);
      const normal = email.trim().toLowerCase();
      if (!/^[^\s@]+@[^\s@]+$/.test(normal) || normal.length > 320) {
        throw new BadRequestError('invalid_email', `not an email address: ${email}`);
      }
      const updated =
        action === 'add' ? await stores.orgs.addPerson(id, list, normal) : await stores.orgs.removePerson(id, list, normal);
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
      return { id: String(created._id), org: String(created.org_id), name: created.name, public_key: created.public_key, secret_key: secretKey };
    },
    async showProject(id: number) {
      return projectView(await project(id));
    },
    async setProject(id: number, set: { enabled?: boolean; security_monitoring?: boolean; name?: string }) {
      await project(id);
      if (Object.keys(set).length === 0) throw new BadRequestError('nothing_to_set', 'name at least one setting');
      const updated = (await stores.projects.update(id, set)) ?? (await project(id));
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
    async setAlerts(id: number, set: Partial<AlertSettings>) {
      const current = await project(id);
      const alerts = { ...DEFAULT_ALERTS, ...current.alerts, ...set };
      const updated = await stores.projects.update(id, { alerts });
      await changes.publish(id);
      return projectView(updated!);
    },
  };
}
export type AdminService = ReturnType<typeof makeAdminService>;
