/**
 * Seat counting. A person is counted once across the organisation: by
 * lower-cased email when there is one, otherwise by company id and person id.
 */

export interface ContactPerson {
  id: string;
  email?: string | null;
}
export interface ContactCompanyInput {
  id: string;
  people: ContactPerson[];
}

export function personKey(companyId: string, person: ContactPerson): string {
  const email = person.email?.trim().toLowerCase();
  return email ? `email:${email}` : `id:${companyId}/${person.id}`;
}

export function contactKeys(companies: readonly ContactCompanyInput[]): Set<string> {
  const keys = new Set<string>();
  for (const company of companies) {
    for (const person of company.people) keys.add(personKey(company.id, person));
  }
  return keys;
}

export function emailKeys(emails: Iterable<string>): Set<string> {
  const keys = new Set<string>();
  for (const email of emails) keys.add(`email:${email.trim().toLowerCase()}`);
  return keys;
}

export function union(...sets: Iterable<string>[]): Set<string> {
  const all = new Set<string>();
  for (const set of sets) for (const key of set) all.add(key);
  return all;
}

export type SeatDecision =
  | { ok: true; used: number }
  | { ok: false; used: number };

/**
 * Decides whether a new contact list may replace the current one.
 * `before` and `after` are everyone counted against the seats with the old
 * and with the new list. The list is refused only when it brings in someone
 * not counted before and the total then exceeds the seats; a list that only
 * shrinks (or keeps the same people) is always accepted, even over the limit.
 */
export function decideSeats(seats: number | null, before: Set<string>, after: Set<string>): SeatDecision {
  const used = after.size;
  if (seats === null || used <= seats) return { ok: true, used };
  for (const key of after) {
    if (!before.has(key)) return { ok: false, used };
  }
  return { ok: true, used };
}
