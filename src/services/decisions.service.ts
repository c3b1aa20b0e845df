/**
 * Decisions (issue 24): what the installation that reports sign-in attempts
 * may act on. The feed (`GET /api/v1/sdk/decisions`) answers every active
 * decision, or with `since` only what changed after that cursor; owners
 * list and lift them on the Alerts page or with `lookout admin decisions`.
 * Expired decisions are ended (and logged as removed) before each read.
 */
import { BadRequestError, NotFoundError } from '../errors.ts';
import { CURSOR, type Decision, type DecisionsState, type EndedDecision } from '../state/decisions.state.ts';

export function decisionView(d: Decision) {
  return {
    id: d.id,
    kind: d.kind,
    type: d.type ?? 'ban',
    escalation: d.escalation ?? 0,
    ...(d.kind === 'brute_force' && d.actor !== null ? { actor: d.actor } : {}),
    ip: d.ip,
    issue_id: d.issue_id,
    created_at: new Date(d.created_at).toISOString(),
    until: new Date(d.until).toISOString(),
    ...(d.extended_at ? { extended_at: new Date(d.extended_at).toISOString(), extensions: d.extensions ?? 1 } : {}),
  };
}

/** A decision in an issue's history: in force, or how and when it ended. */
function historyView(d: Decision | EndedDecision) {
  return 'ended' in d
    ? { ...decisionView(d), state: d.ended, ended_at: new Date(d.ended_at).toISOString() }
    : { ...decisionView(d), state: 'active' as const, ended_at: null };
}

export function makeDecisionsService(state: DecisionsState) {
  async function full(project: number) {
    const { cursor, decisions } = await state.inForce(project);
    return { decisions: decisions.map(decisionView), removed: [] as string[], cursor };
  }

  return {
    async feed(project: number, since: string | undefined, now: Date) {
      if (since !== undefined && !CURSOR.test(since)) {
        throw new BadRequestError('invalid_cursor', 'since must be a cursor this feed gave (the `cursor` of an earlier answer)');
      }
      await state.expire(project, now);
      if (since === undefined) return full(project);
      const changes = await state.changes(project, since);
      if (!changes) return { ...(await full(project)), full: true };
      const set = [...changes.ops].filter(([, op]) => op === 's').map(([id]) => id);
      const decisions = await state.read(project, set);
      const live = new Set(decisions.map((d) => d.id));
      // A decision set and ended within the window is removed; so is one ended since it was set.
      const removed = [...changes.ops.keys()].filter((id) => !live.has(id));
      return { decisions: decisions.map(decisionView), removed, cursor: changes.cursor };
    },
    async list(project: number, now: Date) {
      await state.expire(project, now);
      return { decisions: (await state.active(project)).map(decisionView) };
    },
    /** An issue's decisions, newest first: the one in force, then the last 50 that ended. */
    async ofIssue(project: number, issue: number, now: Date) {
      await state.expire(project, now);
      const { active, ended } = await state.ofIssue(project, issue);
      return { decisions: [...(active ? [active] : []), ...ended].map(historyView) };
    },
    async lift(project: number, id: string, now: Date) {
      const [lifted] = await state.lift(project, [id], now);
      if (!lifted) throw new NotFoundError('decision_not_found', `no active decision ${id} in project ${project}`);
      return { lifted };
    },
  };
}
export type DecisionsService = ReturnType<typeof makeDecisionsService>;
