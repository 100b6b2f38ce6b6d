import { maskPiiDeep, maySearchByPii, type Principal } from '@meld/auth';

/**
 * A segment as this caller may read it. Its filter's values are what someone searched for: a
 * condition on a phone or an email names one, so they are shown as a search by them is allowed,
 * in clear with `mayReadPii`, else with every email and phone in them masked (ADR 0121).
 */
export function segmentView<T extends { filter: { root?: unknown } }>(segment: T, principal: Principal): T {
  if (maySearchByPii(principal)) return segment;
  return { ...segment, filter: { ...segment.filter, ...(segment.filter.root === undefined ? {} : { root: maskPiiDeep(segment.filter.root) }) } };
}
