/** How many allowed names an error message lists before it says "and N more". */
const LISTED = 20;
/** How many allowed names the error object keeps (a catalogue can hold thousands). */
const KEPT = 100;

function formatAllowed(allowed: readonly string[]): string {
  const shown = allowed.slice(0, LISTED).join(', ');
  return allowed.length > LISTED ? `${shown}, … (${allowed.length - LISTED} more)` : shown;
}

/**
 * A filter that does not fit the grammar or the catalogue. `path` names the JSON node
 * (`root.children[2].operator`), `allowed` what may stand there when that is a closed list.
 * It carries `statusCode` 400, so the platform's HttpErrorFilter answers 400 even where a
 * caller lets it through unmapped; `details` is the body's `details`.
 */
export class AudienceFilterError extends Error {
  override readonly name = 'AudienceFilterError';
  readonly statusCode = 400;
  readonly allowed?: readonly string[];

  constructor(
    readonly path: string,
    problem: string,
    allowed?: readonly string[],
  ) {
    super(`${path}: ${problem}${allowed?.length ? `; allowed: ${formatAllowed(allowed)}` : allowed ? '; nothing is allowed here' : ''}`);
    if (allowed) this.allowed = allowed.slice(0, KEPT);
  }

  get details(): { path: string; allowed?: readonly string[] } {
    return this.allowed ? { path: this.path, allowed: this.allowed } : { path: this.path };
  }
}
