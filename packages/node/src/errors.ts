/** What a Lookout answer other than 2xx becomes: one class per outcome a caller may branch on. */

export class LookoutError extends Error {
  override name = 'LookoutError';
  constructor(
    /** HTTP status, 0 when no answer came (network) */
    readonly status: number,
    /** Lookout's stable `reason` code */
    readonly reason: string,
    message: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** 409 on activate: this installation already reports to another project. */
export class InstanceBoundElsewhereError extends LookoutError {
  override name = 'InstanceBoundElsewhereError';
}

/** 409 on activate: this key belongs to a different installation. */
export class ProjectHasInstanceError extends LookoutError {
  override name = 'ProjectHasInstanceError';
}

/** 409 on contacts: the list would add people beyond the plan's seats. */
export class SeatsExceededError extends LookoutError {
  override name = 'SeatsExceededError';
  readonly seats: number | null;
  readonly used: number;
  readonly plan: string;
  constructor(status: number, reason: string, message: string, body: Record<string, unknown>) {
    super(status, reason, message, body);
    this.seats = (body.seats as number | null) ?? null;
    this.used = Number(body.used);
    this.plan = String(body.plan);
  }
}

const BY_REASON: Record<string, typeof LookoutError> = {
  instance_bound_elsewhere: InstanceBoundElsewhereError,
  project_has_instance: ProjectHasInstanceError,
  seats_exceeded: SeatsExceededError,
};

export function errorFromAnswer(status: number, body: Record<string, unknown>): LookoutError {
  const reason = typeof body.reason === 'string' ? body.reason : `http_${status}`;
  const message = typeof body.message === 'string' ? body.message : `Lookout answered ${status}`;
  const Type = BY_REASON[reason] ?? LookoutError;
  return new Type(status, reason, message, body);
}
