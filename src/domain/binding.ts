/** Installation binding rules (spec 3.3 and 5). */

export type ActivationDecision =
  | { kind: 'bind' }
  | { kind: 'conflict'; reason: 'instance_bound_elsewhere' | 'project_has_instance' };

/**
 * @param projectInstance the instance the key's project is bound to, or null
 * @param instanceHolder  the project that holds `instanceId`, or null
 */
export function decideActivation(input: {
  projectId: number;
  instanceId: string;
  projectInstance: string | null;
  instanceHolder: number | null;
}): ActivationDecision {
  if (input.instanceHolder !== null && input.instanceHolder !== input.projectId) {
    return { kind: 'conflict', reason: 'instance_bound_elsewhere' };
  }
  if (input.projectInstance !== null && input.projectInstance !== input.instanceId) {
    return { kind: 'conflict', reason: 'project_has_instance' };
  }
  return { kind: 'bind' };
}

export type InstanceCheck = 'ok' | 'missing' | 'mismatch';

/** A request made with a bound key must name the bound instance. */
export function checkInstance(boundInstance: string | null, header: string | undefined): InstanceCheck {
  if (boundInstance === null) return 'ok';
  if (header === undefined || header === '') return 'missing';
  return header === boundInstance ? 'ok' : 'mismatch';
}
