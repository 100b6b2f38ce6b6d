import type { RootRequest } from '../../audience-roots';

export interface CountAudienceCommand extends RootRequest {
  /** Compliance mode per channel (`sms`, `email`, `rcs`, `whatsapp` → `basic` | `opt-in` | `opt-out`). */
  filterCompliance?: Record<string, string>;
}
