/**
 * CrowdSec bouncers (issue 49): a project's decisions in the shape every CrowdSec bouncer reads (nginx, Traefik,
 * HAProxy, the firewall, custom scripts), so a reverse proxy or firewall that already has one acts on Lookout's
 * decisions with no code on the installation's side.
 *
 * - `stream`: `GET /v1/decisions/stream`. `startup=true` (or a bouncer Lookout has no cursor for) answers every
 *   decision in force; each later call the changes since that bouncer's previous one, read from the project's change
 *   log (src/state/decisions.state.ts), never a scan. A bouncer sends no cursor, so Lookout keeps each one's.
 * - `live`: `GET /v1/decisions?ip=…`, the decisions in force that name an address, a range, or a scope and value.
 *
 * A decision is `{id, origin: "lookout", scenario: "lookout/brute-force" | "lookout/credential-stuffing", scope,
 * type: "ban", value, duration}`. One that names an address has scope `Ip`, an IPv6 /64's scope `Range`; one that names only an account (a
 * brute force whose attempts carried no address) has scope `username`, and only bouncers that ask for that scope
 * get it, since a bouncer that does not understand it would read the account name as an address. Lists with
 * nothing to say are `null`, as bouncers expect.
 */
import net from 'node:net';
import { familyOf, subnetOf } from '../domain/ip-prefix.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { Decision, DecisionsState } from '../state/decisions.state.ts';
import type { BouncerDoc } from '../store/bouncers.store.ts';
import type { Stores } from '../store/index.ts';
import type { Logger } from '../log.ts';
import type { ProjectChanges } from '../state/project-changes.ts';
import { cachedFor } from '../util/cached.ts';
import { makeStartupLists, written, type BouncerView } from './bouncer-startup.ts';
import { randomToken, sha256 } from '../state/web-sessions.ts';

const KEY_PREFIX = 'lkb_';

/** A decision as a bouncer reads it. */
export interface CrowdsecDecision extends BouncerView {
  /** what is left of it, as Go writes durations */
  duration: string;
}

/** The filters a bouncer may send (comma-separated lists, as CrowdSec's API takes them). */
export interface StreamFilters {
  scopes?: string;
  origins?: string;
  scenarios_containing?: string;
  scenarios_not_containing?: string;
}

/** A duration as Go writes it (`3h59m55s`), which is what bouncers parse. */
export function goDuration(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}


export function crowdsecDecision(d: Decision, now: number): CrowdsecDecision {
  const { view } = written(d);
  return { ...view, duration: goDuration(d.until - now) };
}

/** A range (`192.0.2.0/24`, `2001:db8:1:2::/64`) as a block list; null when it is none. */
function blockOf(range: string): net.BlockList | null {
  const subnet = subnetOf(range);
  if (!subnet) return null;
  const block = new net.BlockList();
  block.addSubnet(subnet.address, subnet.bits, subnet.family);
  return block;
}

const commaList = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);

/** A bouncer's filters as a test of a decision; without `scopes`, address and range decisions (CrowdSec's default). */
export function filterOf(f: StreamFilters): (d: Pick<CrowdsecDecision, 'scope' | 'origin' | 'scenario'>) => boolean {
  const given = commaList(f.scopes);
  const scopes = new Set(given.length ? given : ['ip', 'range']);
  const origins = commaList(f.origins);
  const containing = commaList(f.scenarios_containing);
  const notContaining = commaList(f.scenarios_not_containing);
  return (d) =>
    scopes.has(d.scope.toLowerCase()) &&
    (!origins.length || origins.includes(d.origin)) &&
    (!containing.length || containing.some((c) => d.scenario.includes(c))) &&
    !notContaining.some((c) => d.scenario.includes(c));
}

const view = (b: BouncerDoc) => ({
  id: b.id,
  name: b.name,
  hint: `${b.hint}…`,
  created_at: b.created_at.toISOString(),
  last_pull: b.last_pull && { at: b.last_pull.at.toISOString(), ip: b.last_pull.ip, user_agent: b.last_pull.user_agent },
});

export function makeBouncersService(deps: {
  stores: Pick<Stores, 'bouncers'>;
  decisions: DecisionsState;
  /** tells every API process a bouncer was revoked, so each drops its cached keys at once */
  changes: Pick<ProjectChanges, 'publish'>;
  /** how long a process trusts a key it looked up (KEY_CACHE_SECONDS), bounding a missed revocation */
  keyCacheSeconds: number;
  log: Logger;
}) {
  const { stores, decisions: state } = deps;
  const orNull = <T>(items: T[]) => (items.length ? items : null);
  /** key hash → its bouncer (null: none), for KEY_CACHE_SECONDS */
  const keys = cachedFor(deps.keyCacheSeconds * 1000, (hash: string) => stores.bouncers.byHash(hash));
  const startupLists = makeStartupLists(state);
  /** work done beside the answers (notes of pulls, cursors kept, lists prepared), which a shutdown waits for */
  const beside = new Set<Promise<unknown>>();
  const aside = (work: Promise<unknown>, what: string) => {
    const settled = work
      .catch((err: Error) => deps.log.warn({ err: err.message }, what))
      .finally(() => beside.delete(settled));
    beside.add(settled);
  };

  /** Every decision in force that passes `keep`, written as a bouncer's startup answer, with the cursor it is current at. */
  async function startupAnswer(project: number, keep: ReturnType<typeof filterOf>, at: number): Promise<{ cursor: string; json: string }> {
    const { cursor, decisions } = await startupLists.current(project);
    const parts: string[] = [];
    for (const d of decisions) if (keep(d.view)) parts.push(`${d.head}${goDuration(d.until - at)}${d.tail}`);
    return { cursor, json: `{"new":${parts.length ? `[${parts.join(',')}]` : 'null'},"deleted":null}` };
  }

  return {
    /** A new bouncer of the project; its key is in this answer only. */
    async add(project: number, name: string, now = new Date()) {
      const key = `${KEY_PREFIX}${randomToken()}`;
      const doc: BouncerDoc = {
        _id: sha256(key),
        id: randomToken().slice(0, 12),
        project_id: project,
        name: name.trim().slice(0, 100) || 'bouncer',
        hint: key.slice(0, 8),
        created_at: now,
        last_pull: null,
      };
      await stores.bouncers.create(doc);
      // every API process prepares the project's startup list for it
      await deps.changes.publish(project);
      return { ...view(doc), key };
    },
    async list(project: number) {
      return { bouncers: (await stores.bouncers.ofProject(project)).map(view) };
    },
    /** Revokes a bouncer: every API process refuses its key from the answer on (or, if the announcement is lost, within KEY_CACHE_SECONDS). */
    async revoke(project: number, id: string) {
      if (!(await stores.bouncers.revoke(project, id))) throw new NotFoundError('bouncer_not_found', `no bouncer ${id} in project ${project}`);
      keys.forget();
      await deps.changes.publish(project);
      return { revoked: id };
    },
    /** Drops the keys this process looked up (another process revoked one). */
    forget(): void {
      keys.forget();
    },
    /**
     * Builds, in the background, the startup lists of the projects named that have bouncers (none named: every
     * project with bouncers), so that a bouncer's first pull finds its list ready.
     */
    prepare(projects?: number[]): void {
      const what = "could not prepare the bouncers' startup list of a project";
      aside(
        (async () => {
          for (const project of await stores.bouncers.projects(projects)) aside(startupLists.prepare(project), what);
        })(),
        what,
      );
    },
    /** Waits for the work done beside the answers (a shutdown, before the store connections close). */
    async settle(): Promise<void> {
      while (beside.size > 0) await Promise.all([...beside]);
    },
    /** The bouncer a key belongs to; null for a key Lookout does not know (or revoked). */
    async authenticate(key: string): Promise<BouncerDoc | null> {
      return key.startsWith(KEY_PREFIX) ? keys(sha256(key)) : null;
    },

    /** A bouncer's pull, answered as JSON text: the startup list is written straight from the process's copy. */
    async stream(bouncer: BouncerDoc, startup: boolean, filters: StreamFilters, pull: { ip: string; user_agent: string }, now = new Date()): Promise<string> {
      const project = bouncer.project_id;
      // the pull is noted beside the answer, never in its way: what it records is for the owner's list only
      aside(stores.bouncers.pulled(bouncer, { ...pull, at: now }), "could not note a bouncer's pull");
      const [, since] = await Promise.all([state.expire(project, now), startup ? null : state.bouncerCursor.get(project, bouncer.id)]);
      const at = now.getTime();
      const keep = filterOf(filters);
      const changes = since === null ? null : await state.changes(project, since);
      if (!changes) {
        // the first pull, or a log that no longer holds what came after the cursor: everything in force
        const { cursor, json } = await startupAnswer(project, keep, at);
        await state.bouncerCursor.set(project, bouncer.id, cursor);
        return json;
      }
      const following = startupLists.pulled(project);
      if (following) aside(following, "could not bring the bouncers' startup list up to date");
      const shown = (list: Decision[]) => list.map((d) => crowdsecDecision(d, at)).filter(keep);
      if (changes.ops.size === 0) {
        // nothing new: the cursor stays, and only its expiry moves on, beside the answer
        aside(state.bouncerCursor.set(project, bouncer.id, since!), "could not keep a bouncer's cursor");
        return '{"new":null,"deleted":null}';
      }
      const set = [...changes.ops].filter(([, op]) => op === 's').map(([id]) => id);
      const live = await state.read(project, set);
      await state.bouncerCursor.set(project, bouncer.id, changes.cursor);
      return JSON.stringify({ new: orNull(shown(live)), deleted: orNull(shown([...changes.ended.values()])) });
    },

    async live(project: number, q: { ip?: string; range?: string; scope?: string; value?: string; type?: string }, now = new Date()) {
      await state.expire(project, now);
      const at = now.getTime();
      const range = q.range ? blockOf(q.range) : null;
      if (q.range && !range) throw new BadRequestError('invalid_range', 'range is an address and a prefix length, such as 192.0.2.0/24');
      if (q.ip && !net.isIP(q.ip)) throw new BadRequestError('invalid_ip', 'ip is an IPv4 or IPv6 address');
      const found = (await state.active(project))
        .map((d) => crowdsecDecision(d, at))
        .filter((d) => {
          // an address asked about matches its own decisions and the ranges holding it; a range, what lies in it
          if (q.ip && !(d.scope === 'Ip' ? d.value === q.ip : d.scope === 'Range' && blockOf(d.value)?.check(q.ip, familyOf(q.ip)))) return false;
          if (range && !(d.scope !== 'username' && range.check(d.value.split('/')[0]!, familyOf(d.value.split('/')[0]!)))) return false;
          if (q.scope && d.scope.toLowerCase() !== q.scope.toLowerCase()) return false;
          if (q.value && d.value !== q.value) return false;
          return !(q.type && d.type !== q.type);
        });
      return orNull(found);
    },
  };
}
export type BouncersService = ReturnType<typeof makeBouncersService>;
