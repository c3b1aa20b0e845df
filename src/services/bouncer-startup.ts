/**
 * A bouncer's startup list (`GET /v1/decisions/stream?startup=true`) at 100,000 decisions in force (issue 49): each
 * API process keeps the project's decisions in force, each already written as the JSON a bouncer reads apart from
 * its duration, and brings the copy up to date from the change log before each startup pull (O(changes), as the
 * bouncers' own pulls are). A startup pull then costs a duration per decision and one string join, not a read and
 * parse of every decision from Redis. A copy is made when the process starts for every project with bouncers, and
 * when a project gains one; its bouncers' pulls keep it (and bring it up to date every FOLLOW_MS in the background),
 * and one no bouncer pulled for in IDLE_MS is dropped.
 */
import { isRange } from '../domain/ip-prefix.ts';
import type { Decision, DecisionsState } from '../state/decisions.state.ts';
import { isoTime } from '../util/iso-time.ts';

/** A decision as a bouncer reads it, but for its duration (src/services/bouncers.service.ts). */
export interface BouncerView {
  id: number;
  origin: 'lookout';
  scenario: string;
  scope: 'Ip' | 'Range' | 'username';
  type: 'ban' | 'captcha';
  value: string;
  until: string;
}

/** A decision in force as a bouncer's list writes it: the JSON before and after its duration, and what filters read. */
export interface Written {
  head: string;
  tail: string;
  until: number;
  view: BouncerView;
}

const SCENARIOS: Record<Decision['kind'], string> = { brute_force: 'lookout/brute-force', credential_stuffing: 'lookout/credential-stuffing' };

/** A decision as a bouncer's list writes it, in that order: its JSON before and after the duration, which changes. */
export function written(d: Decision): Written {
  return writtenOf(Number(d.id.slice(1)), d.kind, d.type ?? 'ban', d.ip ? (isRange(d.ip) ? 'Range' : 'Ip') : 'username', d.ip ?? d.actor ?? '', d.until);
}

/** A member of the `dw` set (`<id>|<kind>|<type>|<i or a>|<value>`, src/state/decisions.state.ts) as written; null for one of another form. */
export function writtenMember(member: string, until: number): Written | null {
  const a = member.indexOf('|');
  const b = member.indexOf('|', a + 1);
  const c = member.indexOf('|', b + 1);
  const d = member.indexOf('|', c + 1);
  if (a < 2 || d < 0) return null;
  const [kind, type, value] = [member.slice(a + 1, b), member.slice(b + 1, c), member.slice(d + 1)];
  if (!(kind === 'brute_force' || kind === 'credential_stuffing') || !(type === 'ban' || type === 'captcha')) return null;
  const scope = member[c + 1] === 'i' ? (isRange(value) ? 'Range' : 'Ip') : 'username';
  return writtenOf(Number(member.slice(1, a)), kind, type, scope, value, until);
}

function writtenOf(id: number, kind: Decision['kind'], type: 'ban' | 'captcha', scope: BouncerView['scope'], value: string, until: number): Written {
  const view = { id, origin: 'lookout' as const, scenario: SCENARIOS[kind], scope, type, value, until: isoTime(until) };
  // an address needs no escaping; an account may
  const quoted = /^[0-9A-Fa-f.:/]*$/.test(value) ? `"${value}"` : JSON.stringify(value);
  const head = `{"id":${id},"origin":"lookout","scenario":"${view.scenario}","scope":"${scope}","type":"${type}","value":${quoted},"duration":"`;
  return { head, tail: `","until":"${view.until}"}`, until, view };
}

interface Copy {
  cursor: string;
  decisions: Map<string, Written>;
  /** when a pull last asked for it, and when it was last brought up to date */
  used: number;
  refreshed: number;
}

/** How long a project's copy is kept after its bouncers' last pull. */
const IDLE_MS = 10 * 60_000;
/** How often a pull without startup brings the copy up to date (in the background), so it never falls far behind. */
const FOLLOW_MS = 10_000;

export function makeStartupLists(state: DecisionsState) {
  const copies = new Map<number, Copy>();
  /** one refresh at a time per project: startup pulls that come together share it */
  const refreshing = new Map<number, Promise<Copy>>();

  /** Every decision in force, from the set kept as bouncers name them (no decision read whole), or read whole. */
  async function load(project: number): Promise<Copy> {
    const listed = await state.bouncerList(project);
    if (!listed) {
      const { cursor, decisions } = await state.inForce(project);
      return { cursor, decisions: new Map(decisions.map((d) => [d.id, written(d)])), used: Date.now(), refreshed: Date.now() };
    }
    const decisions = new Map<string, Written>();
    const { members } = listed;
    for (let i = 0; i < members.length; i += 2) {
      const w = writtenMember(members[i]!, Number(members[i + 1]));
      if (w) decisions.set(`d${w.view.id}`, w);
    }
    return { cursor: listed.cursor, decisions, used: Date.now(), refreshed: Date.now() };
  }

  async function refresh(project: number): Promise<Copy> {
    const copy = copies.get(project);
    const changes = copy && (await state.changes(project, copy.cursor));
    if (!copy || !changes) return load(project);
    const set = [...changes.ops].filter(([, op]) => op === 's').map(([id]) => id);
    const read = await state.read(project, set);
    // an id set since may have ended too (read finds none): every changed id leaves, and those in force come back
    for (const id of changes.ops.keys()) copy.decisions.delete(id);
    for (const d of read) copy.decisions.set(d.id, written(d));
    return { ...copy, cursor: changes.cursor, refreshed: Date.now() };
  }

  /** The project's copy, brought up to date; pulls that come together share one refresh. */
  function refreshed(project: number): Promise<Copy> {
    let pending = refreshing.get(project);
    if (!pending) {
      pending = refresh(project)
        .then((copy) => (copies.set(project, copy), copy))
        .finally(() => refreshing.delete(project));
      refreshing.set(project, pending);
    }
    return pending;
  }

  return {
    /** The project's decisions in force, up to date with its change log, with the cursor they are current at. */
    async current(project: number): Promise<{ cursor: string; decisions: Iterable<Written> }> {
      const now = Date.now();
      for (const [p, c] of copies) if (now - c.used > IDLE_MS) copies.delete(p);
      const copy = await refreshed(project);
      copy.used = now;
      return { cursor: copy.cursor, decisions: copy.decisions.values() };
    },
    /**
     * A bouncer of the project pulled without startup: its copy is kept, and every FOLLOW_MS brought up to date (the
     * refresh answered, for the caller to run in the background), so a startup pull finds it ready.
     */
    pulled(project: number): Promise<unknown> | null {
      const copy = copies.get(project);
      if (!copy) return null;
      copy.used = Date.now();
      return copy.used - copy.refreshed >= FOLLOW_MS ? refreshed(project) : null;
    },
    /** Builds the project's copy ahead of its bouncers' first startup pull; the caller runs it in the background. */
    async prepare(project: number): Promise<void> {
      if (!copies.has(project)) await refreshed(project);
    },
  };
}
export type StartupLists = ReturnType<typeof makeStartupLists>;
