/** What the apply scripts (apply-events-4.lua, apply-burst-3.lua) answer about issues' statuses, decoded once. */

/** What applying events changed in an issue's status: a regression (`n`: its number) or an ignore that ended (`n`: its events). */
export interface IssueChange {
  issue: number;
  what: 'regressed' | 'unignored';
  n: number;
  at: Date;
  release: string | null;
  regression_kind: 'same_release' | 'new_release' | null;
}

/** The issue changes an apply script answers (apply-events-4.lua, apply-burst-3.lua), as JSON. */
export function issueChangesOf(json: string | undefined): IssueChange[] {
  return (JSON.parse(json ?? '[]') as [number, IssueChange['what'], number, number, string, string][]).map(
    ([issue, what, n, at, release, kind]): IssueChange => ({
      issue,
      what,
      n,
      at: new Date(at),
      release: release || null,
      regression_kind: (kind || null) as IssueChange['regression_kind'],
    }),
  );
}
