import { AUDIENCE_FILTER_VERSION } from '@meld/filters';
import { z } from 'zod';

/**
 * The body fields naming an audience (AudienceSelections): a filter `root` with its `version`,
 * or a saved `segment` in their place. `absent` says what neither selects.
 */
export function audienceSelectionFields(absent: string) {
  return {
    version: z.unknown().optional().describe(`audience filter version: \`${AUDIENCE_FILTER_VERSION}\` (the only one)`),
    root: z.unknown().optional().describe(`audience filter root (system design §4), as in \`/audience/count\`; absent (and no \`segment\`): ${absent}`),
    segment: z.string().min(1).max(100).optional().describe('a saved segment id: its contacts, in place of `version` and `root`'),
  };
}
