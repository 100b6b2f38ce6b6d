/**
 * A list query the caller must fix: `parameter` names where, in the caller's own terms
 * (`name_eqq`, `_sort`, `_q.filter[1].operator`), and `allowed` lists what would be accepted
 * there when that is a closed set. Apps answer it as 400 with `details` = {parameter, allowed?}.
 */
export class ListQueryError extends Error {
  override readonly name = 'ListQueryError';

  constructor(
    readonly parameter: string,
    readonly problem: string,
    readonly allowed?: readonly string[],
  ) {
    super(`${parameter}: ${problem}${allowed ? ` (allowed: ${allowed.join(', ')})` : ''}`);
  }

  get details(): { parameter: string; allowed?: readonly string[] } {
    return { parameter: this.parameter, ...(this.allowed ? { allowed: this.allowed } : {}) };
  }
}
