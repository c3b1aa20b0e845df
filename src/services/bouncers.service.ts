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
 * type: "ban", value, duration}`. One that names an address has scope `Ip`; one that names only an account (a
 * brute force whose attempts carried no address) has scope `username`, and only bouncers that ask for that scope
 * get it, since a bouncer that does not understand it would read the account name as an address. Lists with
 * nothing to say are `null`, as bouncers expect.
 */
import net from 'node:net';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { Decision, DecisionsState } from '../state/decisions.state.ts';
import type { BouncerDoc } from '../store/bouncers.store.ts';
import type { Stores } from '../store/index.ts';
import { randomToken, sha256 } from './web-sessions.ts';

const KEY_PREFIX = 'lkb_';

export interface CrowdsecDecision {
  id: number;
  origin: 'lookout';
  scenario: string;
  scope: 'Ip' | 'username';
  type: 'ban' | 'captcha';
  value: string;
  duration: string;
  until: string;
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

const SCENARIOS: Record<Decision['kind'], string> = { brute_force: 'lookout/brute-force', credential_stuffing: 'lookout/credential-stuffing' };

export function crowdsecDecision(d: Decision, now: number): CrowdsecDecision {
  return {
    id: Number(d.id.replace(/^d/, '')),
    origin: 'lookout',
    scenario: SCENARIOS[d.kind],
    scope: d.ip ? 'Ip' : 'username',
    type: d.type ?? 'ban',
    value: d.ip ?? d.actor ?? '',
    duration: goDuration(d.until - now),
    until: new Date(d.until).toISOString(),
  };
}

const commaList = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);

/** Whether a decision passes a bouncer's filters; without `scopes`, only address decisions (CrowdSec's default). */
export function passes(d: CrowdsecDecision, f: StreamFilters): boolean {
  const scopes = commaList(f.scopes);
  if (!(scopes.length ? scopes : ['ip']).includes(d.scope.toLowerCase())) return false;
  const origins = commaList(f.origins);
  if (origins.length && !origins.includes(d.origin)) return false;
  const containing = commaList(f.scenarios_containing);
  if (containing.length && !containing.some((c) => d.scenario.includes(c))) return false;
  return !commaList(f.scenarios_not_containing).some((c) => d.scenario.includes(c));
}

const view = (b: BouncerDoc) => ({
  id: b.id,
  name: b.name,
  hint: `${b.hint}…`,
  created_at: b.created_at.toISOString(),
  last_pull: b.last_pull && { at: b.last_pull.at.toISOString(), ip: b.last_pull.ip, user_agent: b.last_pull.user_agent },
});

export function makeBouncersService(deps: { stores: Pick<Stores, 'bouncers'>; decisions: DecisionsState }) {
  const { stores, decisions: state } = deps;
  const orNull = <T>(items: T[]) => (items.length ? items : null);

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
      return { ...view(doc), key };
    },
    async list(project: number) {
      return { bouncers: (await stores.bouncers.ofProject(project)).map(view) };
    },
    async revoke(project: number, id: string) {
      if (!(await stores.bouncers.revoke(project, id))) throw new NotFoundError('bouncer_not_found', `no bouncer ${id} in project ${project}`);
      return { revoked: id };
    },
    /** The bouncer a key belongs to; null for a key Lookout does not know (or revoked). */
    async authenticate(key: string): Promise<BouncerDoc | null> {
      if (!key.startsWith(KEY_PREFIX)) return null;
      return stores.bouncers.byHash(sha256(key));
    },

    async stream(bouncer: BouncerDoc, startup: boolean, filters: StreamFilters, pull: { ip: string; user_agent: string }, now = new Date()) {
      const project = bouncer.project_id;
      await Promise.all([state.expire(project, now), stores.bouncers.pulled(bouncer, { ...pull, at: now })]);
      const at = now.getTime();
      const shown = (list: Decision[]) => list.map((d) => crowdsecDecision(d, at)).filter((d) => passes(d, filters));
      const since = startup ? null : await state.bouncerCursor.get(project, bouncer.id);
      const changes = since === null ? null : await state.changes(project, since);
      if (!changes) {
        // the first pull, or a log that no longer holds what came after the cursor: everything in force
        const { cursor, decisions } = await state.inForce(project);
        await state.bouncerCursor.set(project, bouncer.id, cursor);
        return { new: orNull(shown(decisions)), deleted: null };
      }
      const set = [...changes.ops].filter(([, op]) => op === 's').map(([id]) => id);
      const live = await state.read(project, set);
      await state.bouncerCursor.set(project, bouncer.id, changes.cursor);
      return { new: orNull(shown(live)), deleted: orNull(shown([...changes.ended.values()])) };
    },

    async live(project: number, q: { ip?: string; range?: string; scope?: string; value?: string; type?: string }, now = new Date()) {
      await state.expire(project, now);
      const at = now.getTime();
      let range: net.BlockList | null = null;
      if (q.range) {
        const [address = '', bits = ''] = q.range.split('/');
        const family = net.isIP(address);
        if (!family || !/^\d{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128))
          throw new BadRequestError('invalid_range', 'range is an address and a prefix length, such as 192.0.2.0/24');
        range = new net.BlockList();
        range.addSubnet(address, Number(bits), family === 4 ? 'ipv4' : 'ipv6');
      }
      const found = (await state.active(project))
        .map((d) => crowdsecDecision(d, at))
        .filter((d) => {
          if (q.ip && !(d.scope === 'Ip' && d.value === q.ip)) return false;
          if (range && !(d.scope === 'Ip' && range.check(d.value, net.isIP(d.value) === 6 ? 'ipv6' : 'ipv4'))) return false;
          if (q.scope && d.scope.toLowerCase() !== q.scope.toLowerCase()) return false;
          if (q.value && d.value !== q.value) return false;
          return !(q.type && d.type !== q.type);
        });
      return orNull(found);
    },
  };
}
export type BouncersService = ReturnType<typeof makeBouncersService>;
