import type { Principal } from '@meld/auth';
import type { FilterCatalogue } from '@meld/filters';

export interface CountAudienceCommand {
  projectId: string;
  /** Audience filter version; absent or `0.0.1`. */
  version?: unknown;
  /** Audience filter root (system.md §4); absent: the whole audience. */
  root?: unknown;
  /** Compliance mode per channel (`sms`, `email`, `rcs`, `whatsapp` → `basic` | `opt-in` | `opt-out`). */
  filterCompliance?: Record<string, string>;
  /**
   * The caller, when the count answers a request: conditions on email or phone attributes then
   * need `maySearchByPii`. Absent for internal callers (a stored segment's count).
   */
  principal?: Principal;
  /** JSON path of `root` in the caller's request, for error paths (default `root`; a segment's is `filter.root`). */
  rootPath?: string;
  /** The project's filter catalogue when the caller has just read it (a segment's count); read otherwise. */
  catalogue?: FilterCatalogue;
}
