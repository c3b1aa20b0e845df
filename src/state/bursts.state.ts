/**
 * The burst detectors' hot state in Redis: each (actor, address) group's and each address's sign-in attempts in
 * the look-back (written by apply-events-4.lua with the events), each detector's saved fold, and the bursts recorded
 * in their security issues (apply-burst-3.lua). src/services/bursts.service.ts runs the detectors over it.
 */
import crypto from 'node:crypto';
import { attemptMember, readAttemptMember } from '../domain/client-keys.ts';
import { ipv6Prefix64 } from '../domain/ip-prefix.ts';
import { byTimeThenId, settingsKey, type Attempt, type BurstSettings, type Detector, type DetectorState } from '../domain/bursts.ts';
import type { RedisClient } from '../redis/connect.ts';
import { answerOf, defineScripts, projectKeys, type ScriptPipeline } from './scripts.ts';
import { issueChangesOf, type IssueChange } from './issue-changes.ts';

/** The sign-in attempts the burst detectors read; other security kinds are stored and shown but do not count. */
export const ATTEMPT_KINDS: ReadonlySet<string> = new Set(['login_failed', 'login_succeeded']);

/** How far back the detectors read a group's attempts, and the most they read; bursts chained over longer spans may split. */
export const DETECTION_LOOKBACK_MS = 24 * 3600 * 1000;
/**
 * How long a security issue's span stays in its detector group's index (apply-burst-3.lua), where a burst another
 * fold names by a later attempt finds the issue of the same attack: longer than any fold reaches back.
 */
export const BURST_SPAN_MS = 2 * DETECTION_LOOKBACK_MS;
export const DETECTION_MAX_ATTEMPTS = 20_000;
/**
 * A detector's fold is saved up to this long before its newest attempt: attempts arrive a little out of order
 * (workers apply jobs side by side), and one older than a saved fold's newest makes the next fold start over.
 */
export const DETECTION_SETTLE_MS = 15_000;

/** A sign-in attempt as the apply script takes it. */
export interface AttemptEntry {
  event_id: string;
  at: Date;
  kind: string;
  actor: string;
  /** its brute-force group (src/domain/client-keys.ts' attemptGroupKey of its actor and address) */
  group: string;
  ip: string | null;
}

/** The detector each kind of attempts key feeds: an (actor, ip) group's (`ag`), an ip's (`aip`), an IPv6 /64's (`a64`). */
export const DETECTOR_OF = { ag: 'brute_force', aip: 'credential_stuffing', a64: 'credential_stuffing' } as const satisfies Record<string, Detector>;

/**
 * A burst detector's attempts: an (actor, ip) group's (`ag`, keyed by the group's hash), an ip's (`aip`, keyed by
 * the address) or an IPv6 /64's (`a64`, keyed by the prefix), since the look-back's start. The actor and address
 * are the attempts' own, carried beside the key: nothing is read back out of a key.
 */
export interface DetectorKey {
  kind: keyof typeof DETECTOR_OF;
  key: string;
  /** the group's actor (`ag`); null for an address's attempts */
  actor: string | null;
  /** the attempts' address, or their /64 (`2001:db8:1:2::/64`); null for a group of attempts sent without one */
  ip: string | null;
  since: Date;
}

/** What a detector folds next (BurstsState.detectorReads). */
export interface DetectorRead {
  /** the saved fold's version token ('' for none) */
  version: string;
  /** the saved fold to go on from; null: fold `fresh` from the start */
  state: DetectorState | null;
  /** where the saved fold's window starts (ms) */
  windowFrom: number;
  /** the attempts read from this time (ms) on */
  from: number;
  fresh: Attempt[];
  /** the failures of the saved fold's window at most a window older than the newest fresh attempt */
  leaving: Attempt[];
}

export interface BurstEntry {
  fingerprint: string;
  title: string;
  detector: 'brute_force' | 'credential_stuffing';
  /** the digest of the detector's group (actor and address, or address) */
  group: string;
  /** the event ids of the burst's earliest and newest attempts: with `first` and `latest_at`, its span */
  first_id: string;
  last_id: string;
  /** the burst's actor (brute force) and address, as the notification names them */
  actor: string | null;
  ip: string | null;
  count: number;
  first: Date;
  last: Date;
  latest: string;
  latest_at: Date;
  /** when the batch was received, if the burst holds one of its attempts (it may regress the issue) */
  received?: Date;
  /** why the burst makes no decision, kept on its issue: its actor or address is allowlisted, or the project only monitors */
  policy?: 'allowlisted' | 'monitoring' | '';
}

export function makeBurstsState(redis: RedisClient, opts: { prefix: string }) {
  const r = defineScripts(redis);
  const keys = (project: number) => projectKeys(opts.prefix, project);
  return {
    /**
     * What each burst detector folds next (src/domain/bursts.ts), for groups (`ag`) or ips (`aip`), in one round
     * trip: its saved fold with the attempts after it and the failures that may leave its window, or, where no
     * saved fold can be gone on from (or `full`), no fold and every attempt since the look-back's start `since`;
     * 'unverified' while a rebuild or recount replaces the project's state (its epoch deleted).
     */
    async detectorReads(project: number, reads: DetectorKey[], settings: BurstSettings, full = false): Promise<DetectorRead[] | 'unverified'> {
      const { base, epoch } = keys(project);
      const pipe = redis.pipeline() as unknown as ScriptPipeline;
      for (const r of reads) {
        pipe.readDetector(
          epoch,
          `${base}${r.kind}:${r.key}`,
          `${base}dt:${r.kind}:${r.key}`,
          r.since.getTime(),
          settings.window_seconds * 1000,
          settingsKey(DETECTOR_OF[r.kind], settings),
          DETECTION_MAX_ATTEMPTS,
          full ? 'full' : '',
        );
      }
      const answers = (await pipe.exec()) ?? [];
      if (answers.some(([, answer]) => typeof answer === 'number' && answerOf(answer, {}) === 'unverified')) return 'unverified';
      return answers.map(([err, answer], i) => {
        if (err) throw err;
        const [version, fold, windowFrom, from, fresh, leaving] = answer as [string, string, string, string, string[], string[]];
        // a group's members leave out its actor, which the key carries beside it; a /64's carry each one's address
        const { actor, kind } = reads[i]!;
        const read = (raw: string[]) => (kind === 'a64' ? readAttempts(raw, '').map(withAddress) : readAttempts(raw, actor ?? ''));
        return {
          version,
          state: fold === '' ? null : (JSON.parse(fold) as DetectorState),
          windowFrom: Number(windowFrom),
          from: Number(from),
          fresh: read(fresh),
          leaving: read(leaving),
        };
      });
    },
    /**
     * Saves a detector's fold made from `read`, unless it holds nothing more than the fold read, or something
     * moved since (save-detector-2.lua): another fold was saved, or an attempt it should hold arrived. Returns
     * whether it was saved.
     */
    async saveDetector(project: number, key: DetectorKey, read: DetectorRead, state: DetectorState): Promise<boolean> {
      // A fold that took in no settled attempt is the one read: nothing to write (and no version to change under another fold).
      if (!state.last || (read.state?.last && byTimeThenId(state.last, read.state.last) === 0)) return false;
      const base = keys(project).base;
      const last = state.last.at;
      const held = read.fresh.filter((a) => a.at <= last).length;
      const windowFrom = state.after?.at ?? read.windowFrom;
      const token = crypto.randomBytes(6).toString('base64url');
      const saved = await r.saveDetector(
        `${base}${key.kind}:${key.key}`,
        `${base}dt:${key.kind}:${key.key}`,
        read.version,
        read.from,
        last,
        held,
        token,
        JSON.stringify(state),
        windowFrom,
        state.settings,
        2 * DETECTION_LOOKBACK_MS,
      );
      return saved === 1;
    },

    /**
     * Records a burst in its issue; `notify`: the project's triggers go to its
     * outbox; `decisionSeconds` > 0: the burst makes or extends the issue's decision.
     */
    async applyBurst(
      project: number,
      issue: number,
      burst: BurstEntry,
      /** `attempts`: the attempts this fold added to the burst, recorded in the issue once each */
      opts: {
        notify?: boolean;
        decisionSeconds?: number;
        now?: Date;
        attempts?: { id: string; at: number; actor: string | null; ip: string | null }[];
        /** the decision's type, and its escalation (ARGV[9] of apply-burst-3.lua) */
        decision?: { type: 'ban' | 'captcha'; escalate: boolean; maxSeconds: number };
      } = {},
    ): Promise<{ code: 'changed' | 'unchanged' | 'unverified'; changes: IssueChange[] }> {
      const k = keys(project);
      const arg = {
        ...burst,
        first: burst.first.getTime(),
        last: burst.last.getTime(),
        latest_at: burst.latest_at.getTime(),
        received: burst.received?.getTime(),
      };
      const [code, changes] = await r.applyBurst(
        k.epoch,
        k.eseq,
        k.edirty,
        k.base,
        issue,
        JSON.stringify(arg),
        opts.notify ? 't' : '',
        opts.decisionSeconds ?? 0,
        (opts.now ?? new Date()).getTime(),
        BURST_SPAN_MS,
        JSON.stringify((opts.attempts ?? []).map((a) => [a.id, a.at, a.actor ?? '', a.ip ?? ''])),
        JSON.stringify(opts.decision ? { type: opts.decision.type, escalate: opts.decision.escalate, max_ms: opts.decision.maxSeconds * 1000 } : {}),
      );
      return { code: answerOf(code, { 1: 'changed', 0: 'unchanged' } as const), changes: issueChangesOf(changes) };
    },
  };
}
export type BurstsState = ReturnType<typeof makeBurstsState>;

/**
 * An attempt's sorted sets and its members there (src/domain/client-keys.ts): its group's, `ag:<group>` holding
 * `<id>|<kind>`, its address's, `aip:<ip>` holding `<id>|<kind>|<actor>`, and for an IPv6 address its /64's,
 * `a64:<prefix>` holding `<id>|<kind>|<ip>|<actor>`. Each attempt is a member of two or three sets for two days,
 * and the members are most of what Redis and its AOF hold per attempt, so the kind is one letter, the event id its
 * 16 bytes in base64url (22 characters), and the group's set leaves out the actor its key stands for.
 */
const KIND_CODES: Record<string, string> = { login_failed: 'f', login_succeeded: 's' };
const KINDS_BY_CODE = new Map(Object.entries(KIND_CODES).map(([kind, code]) => [code, kind]));

export function attemptSets(a: AttemptEntry): [string, string][] {
  const member = { id: a.event_id, kind: KIND_CODES[a.kind] ?? a.kind };
  const sets: [string, string][] = [[`ag:${a.group}`, attemptMember(member)]];
  if (a.ip) sets.push([`aip:${a.ip}`, attemptMember({ ...member, actor: a.actor })]);
  const prefix = a.ip && ipv6Prefix64(a.ip);
  if (prefix) sets.push([`a64:${prefix}`, attemptMember({ ...member, actor: `${a.ip}|${a.actor}` })]);
  return sets;
}

/** A /64's attempt, whose member's actor part is `<ip>|<actor>` (an address holds no '|'). */
function withAddress(a: Attempt): Attempt {
  const bar = a.actor.indexOf('|');
  return { ...a, ip: a.actor.slice(0, bar), actor: a.actor.slice(bar + 1) };
}

/** Members with their scores → attempts; `actor` is the group's, for members that leave it out. */
function readAttempts(raw: string[], actor: string): Attempt[] {
  const out: Attempt[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const m = readAttemptMember(raw[i]!);
    out.push({ id: m.id, kind: KINDS_BY_CODE.get(m.kind) ?? m.kind, actor: m.actor ?? actor, at: Number(raw[i + 1]) });
  }
  return out;
}
