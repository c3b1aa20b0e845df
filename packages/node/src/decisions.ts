/**
 * The installation's copy of Lookout's decisions (issue 24): filled from the
 * decisions feed (whole at start, then only what changed since the cursor)
 * and asked synchronously by `isBlocked`, on the sign-in path, with no
 * request of its own.
 */

import net from 'node:net';
import type { Decision, DecisionsFeed } from './api-types.js';

export type { Decision, DecisionsFeed };

export function makeDecisionCopy() {
  const active = new Map<string, Decision>();
  /** Decision ids by the address they name ('' for none), so a check reads only that address's. */
  const byIp = new Map<string, Set<string>>();
  /** Decisions that name a range (credential stuffing over an IPv6 /64), each with its block list; few at a time. */
  const ranges = new Map<string, net.BlockList>();
  let cursor: string | null = null;

  const drop = (id: string) => {
    const d = active.get(id);
    if (!d) return;
    active.delete(id);
    byIp.get(d.ip ?? '')?.delete(id);
    ranges.delete(id);
  };
  const put = (d: Decision) => {
    drop(d.id);
    active.set(d.id, d);
    const block = d.ip?.includes('/') ? blockOf(d.ip) : null;
    if (block) return void ranges.set(d.id, block);
    const ids = byIp.get(d.ip ?? '') ?? new Set<string>();
    ids.add(d.id);
    byIp.set(d.ip ?? '', ids);
  };

  return {
    /** The cursor to poll from; null before the first answer (poll without one). */
    cursor: () => cursor,
    /** Takes an answer of the feed; true when the copy changed. */
    apply(answer: DecisionsFeed): boolean {
      // Every decision an answer carries is new or extended, so any of them, or an active one removed, is a change.
      let changed = answer.decisions.length > 0;
      if (cursor === null || answer.full) {
        changed ||= active.size > 0;
        active.clear();
        byIp.clear();
        ranges.clear();
      }
      for (const id of answer.removed) {
        changed ||= active.has(id);
        drop(id);
      }
      for (const d of answer.decisions) put(d);
      cursor = answer.cursor;
      return changed;
    },
    /** Whether a decision in force names this sign-in: its address (or a range holding it), and for brute force its actor too. */
    isBlocked(who: { actor?: string | null; ip?: string | null }, now = Date.now()): boolean {
      for (const id of byIp.get(who.ip ?? '') ?? []) {
        const d = active.get(id)!;
        if (Date.parse(d.until) <= now) continue;
        if (d.kind === 'credential_stuffing' || d.actor === (who.actor ?? undefined)) return true;
      }
      const version = who.ip ? net.isIP(who.ip) : 0;
      if (version === 0) return false;
      for (const [id, block] of ranges) {
        if (Date.parse(active.get(id)!.until) > now && block.check(who.ip!, version === 6 ? 'ipv6' : 'ipv4')) return true;
      }
      return false;
    },
    list: (now = Date.now()): Decision[] => [...active.values()].filter((d) => Date.parse(d.until) > now),
  };
}

/** A range (`2001:db8:1:2::/64`) as a block list; null for one this copy cannot read. */
function blockOf(range: string): net.BlockList | null {
  const [address = '', bits = ''] = range.split('/');
  const version = net.isIP(address);
  if (!version || !/^\d{1,3}$/.test(bits)) return null;
  const block = new net.BlockList();
  block.addSubnet(address, Number(bits), version === 6 ? 'ipv6' : 'ipv4');
  return block;
}
