/**
 * A project's allowlist (issue 49): addresses, CIDR ranges and actors for which a sign-in burst makes no decision.
 * An entry that reads as an address or a range matches addresses; any other entry matches an actor, compared without
 * regard to case (accounts are mostly email addresses).
 */
import net from 'node:net';
import { familyOf, subnetOf } from './ip-prefix.ts';

export interface Allowlist {
  allows(who: { actor: string | null; ip: string | null }): boolean;
}

export function makeAllowlist(entries: readonly string[]): Allowlist {
  const addresses = new net.BlockList();
  const actors = new Set<string>();
  for (const raw of entries) {
    const entry = raw.trim();
    const subnet = subnetOf(entry);
    if (net.isIP(entry)) addresses.addAddress(entry, familyOf(entry));
    else if (subnet) addresses.addSubnet(subnet.address, subnet.bits, subnet.family);
    else actors.add(entry.toLowerCase());
  }
  return {
    allows({ actor, ip }) {
      if (actor !== null && actors.has(actor.toLowerCase())) return true;
      return ip !== null && net.isIP(ip) !== 0 && addresses.check(ip, familyOf(ip));
    },
  };
}
