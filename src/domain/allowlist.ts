/**
 * A project's allowlist (issue 49): addresses, CIDR ranges and actors for which a sign-in burst makes no decision.
 * An entry that reads as an address or a range matches addresses; any other entry matches an actor, compared without
 * regard to case (accounts are mostly email addresses).
 */
import net from 'node:net';

export interface Allowlist {
  allows(who: { actor: string | null; ip: string | null }): boolean;
}

export function makeAllowlist(entries: readonly string[]): Allowlist {
  const addresses = new net.BlockList();
  const actors = new Set<string>();
  for (const raw of entries) {
    const entry = raw.trim();
    const [address = '', bits] = entry.split('/');
    const family = net.isIP(address);
    if (family && bits === undefined) addresses.addAddress(address, family === 4 ? 'ipv4' : 'ipv6');
    else if (family && /^\d{1,3}$/.test(bits!) && Number(bits) <= (family === 4 ? 32 : 128))
      addresses.addSubnet(address, Number(bits), family === 4 ? 'ipv4' : 'ipv6');
    else actors.add(entry.toLowerCase());
  }
  return {
    allows({ actor, ip }) {
      if (actor !== null && actors.has(actor.toLowerCase())) return true;
      const family = ip ? net.isIP(ip) : 0;
      return family !== 0 && addresses.check(ip!, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}
