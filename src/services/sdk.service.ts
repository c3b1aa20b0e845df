/** Activation, config and contacts (spec 2.1–2.4, 3.3, 4.1–4.3). */
import { decideActivation } from '../domain/binding.ts';
import { contactKeys, decideSeats, emailKeys, union, type ContactCompanyInput } from '../domain/seats.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { Stores } from '../store/index.ts';
import type { OrgDoc } from '../store/orgs.store.ts';
import type { ProjectDoc } from '../store/projects.store.ts';
import type { KeyResolver } from '../http/key-resolver.ts';

import type { ActivateBody, ContactsBody } from '../generated/schema-types.ts';

export type { ActivateBody, ContactsBody };

/** How old a binding must be before an unconfirmed one counts as left over. */
const STALE_BINDING_MS = 60_000;

export function features(project: ProjectDoc, org: OrgDoc) {
  return { security_monitoring: project.security_monitoring, plan: org.plan, seats: org.seats };
}

export function makeSdkService(stores: Stores, resolver: KeyResolver) {
  async function orgOf(project: ProjectDoc): Promise<OrgDoc> {
    const org = await stores.orgs.get(project.org_id);
    if (!org) throw new NotFoundError('org_not_found', `organisation ${project.org_id} no longer exists`);
    return org;
  }

  /** Who is counted against the organisation's seats, list by list, with `override` as one project's contacts. */
  async function seatLists(org: OrgDoc, override?: { projectId: number; companies: ContactCompanyInput[] }) {
    const lists = await stores.contacts.inOrg(org._id);
    const contacts = lists.map((doc) => (override && doc._id === override.projectId ? contactKeys(override.companies) : contactKeys(doc.companies)));
    if (override && !lists.some((doc) => doc._id === override.projectId)) contacts.push(contactKeys(override.companies));
    return { contacts: union(...contacts), members: emailKeys(org.members), invites: emailKeys(org.invites), email_rules: emailKeys(org.email_rules) };
  }

  /** Everyone counted against the organisation's seats, each person once. */
  async function seatKeys(org: OrgDoc, override?: { projectId: number; companies: ContactCompanyInput[] }) {
    return union(...Object.values(await seatLists(org, override)));
  }

  return {
    async activate(resolved: ProjectDoc, body: ActivateBody, now: Date) {
      // Read afresh, not from the key cache: an unbind made a moment ago must be seen by the next activation.
      const project = (await stores.projects.get(resolved._id)) ?? resolved;
      const instanceId = body.instance_id;
      const claim = await stores.bindings.claim(instanceId, project._id, now);
      let holder: number | null = claim.projectId;
      if (holder !== project._id) {
        // A binding whose project no longer names this instance is left over from an
        // interrupted activation or an unbind: release it and claim again. A young one
        // may belong to an activation still under way, so it is left alone.
        const other = await stores.projects.get(holder);
        const settled = now.getTime() - claim.createdAt.getTime() > STALE_BINDING_MS;
        if (!other || (other.instance_id !== instanceId && settled)) {
          await stores.bindings.release(instanceId, holder);
          holder = (await stores.bindings.claim(instanceId, project._id, now)).projectId;
        }
      }
      const decision = decideActivation({
        projectId: project._id,
        instanceId,
        projectInstance: project.instance_id,
        instanceHolder: holder,
      });
      if (decision.kind === 'conflict') {
        if (claim.created) await stores.bindings.release(instanceId, project._id);
        throw conflict(decision.reason);
      }
      const bound = await stores.projects.bind(project._id, {
        instance_id: instanceId,
        base_url: body.base_url ?? null,
        platform: body.platform ?? null,
        platform_version: body.platform_version ?? null,
        terms_version: body.terms_version ?? null,
        accepted_by: body.accepted_by ?? null,
        activated_at: project.installation?.activated_at ?? now,
        last_activated_at: now,
      });
      if (!bound) {
        // Another installation won a concurrent activation of this key.
        await stores.bindings.release(instanceId, project._id);
        throw conflict('project_has_instance');
      }
      resolver.forget();
      const org = await orgOf(bound);
      return {
        project: { id: String(bound._id), name: bound.name },
        org: { id: String(org._id), name: org.name },
        enabled: bound.enabled,
        public_key: bound.public_key,
        features: features(bound, org),
      };
    },

    async config(project: ProjectDoc) {
      const org = await orgOf(project);
      return { public_key: project.public_key, enabled: project.enabled, features: features(project, org) };
    },

    async putContacts(project: ProjectDoc, body: ContactsBody, now: Date) {
      const org = await orgOf(project);
      const companies = body.companies.map((c) => ({
        id: String(c.id),
        name: c.name ?? null,
        people: c.people.map((p) => ({ id: String(p.id), name: p.name ?? null, email: p.email?.trim() || null })),
      }));
      const before = await seatKeys(org);
      const after = await seatKeys(org, { projectId: project._id, companies });
      const decision = decideSeats(org.seats, before, after);
      if (!decision.ok) {
        throw new ConflictError('seats_exceeded', `the list would use ${decision.used} seats of the ${org.seats} in plan ${org.plan}`, {
          seats: org.seats,
          used: decision.used,
          plan: org.plan,
        });
      }
      await stores.contacts.replace({ _id: project._id, org_id: org._id, companies, updated_at: now });
      return { used: decision.used, seats: org.seats, plan: org.plan };
    },

    seatKeys,
    seatLists,
  };
}
export type SdkService = ReturnType<typeof makeSdkService>;

function conflict(reason: 'instance_bound_elsewhere' | 'project_has_instance'): ConflictError {
  return reason === 'instance_bound_elsewhere'
    ? new ConflictError(reason, 'this installation is already bound to another project')
    : new ConflictError(reason, 'this key already belongs to a different installation');
}
