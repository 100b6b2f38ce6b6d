import { EVENTS_LOOK_BACK_DAYS, type Plan } from '@meld/contracts';

const DAY_S = 86_400;

export interface ProjectRetention {
  projectId: string;
  plan: Plan;
  /** Declared types with their own retention (days). */
  eventTypes: ReadonlyArray<{ uid: string; retentionDays: number }>;
}

/** One delete: the project's events (of one type, when `eventType` is set) dated before `before` (unix seconds). */
export interface Prune {
  projectId: string;
  eventType?: string;
  before: number;
}

/**
 * What retention removes (issue 15, ADR 0168): every event older than the plan's look-back, and
 * of a type whose `retentionDays` is shorter, every event older than that. A retention longer
 * than the look-back changes nothing: the look-back removes those events first.
 */
export function prunes(projects: readonly ProjectRetention[], nowSeconds: number): Prune[] {
  return projects.flatMap((p) => {
    const lookBack = EVENTS_LOOK_BACK_DAYS[p.plan];
    const byType = p.eventTypes.filter((t) => t.retentionDays < lookBack).map((t) => ({ projectId: p.projectId, eventType: t.uid, before: nowSeconds - t.retentionDays * DAY_S }));
    return [{ projectId: p.projectId, before: nowSeconds - lookBack * DAY_S }, ...byType];
  });
}
