import { CHANNEL_GROUPS, type ChannelConfig, DEFAULT_OPT_OUT_KEYWORDS, normaliseKeyword } from '@meld/contracts';
import type { ProjectEntity } from '@meld/db';
import type { z } from 'zod';
import { fieldError } from '../http/field-error';
import type { GeneralConfigPatch } from './project-fields';

const BOTH = 'a keyword in both lists only ever opts out';

/**
 * The keyword lists a `generalConfig` patch writes, compared as inbound SMS are matched
 * (`normaliseKeyword`, ADR 0183): a keyword twice in one list, or in both lists of a block (the
 * other one as it will be stored; on SMS the carrier-standard opt-outs, always honoured, count
 * as opt-out keywords), is a 400 naming the sent one. Blocks the patch leaves alone are not checked.
 */
export function checkKeywords(patch: z.infer<typeof GeneralConfigPatch> | undefined, merged: ProjectEntity['generalConfig'] | undefined): void {
  if (!patch || !merged) return;
  for (const group of CHANNEL_GROUPS) {
    const sent = patch[group];
    if (!sent) continue;
    const path = `generalConfig.${group}`;
    if (sent.optOutKeywords) checkRepeats(`${path}.optOutKeywords`, sent.optOutKeywords);
    if (sent.optInKeywords) checkRepeats(`${path}.optInKeywords`, sent.optInKeywords);
    const { optInKeywords, optOutKeywords } = merged[group] as Pick<ChannelConfig, 'optInKeywords' | 'optOutKeywords'>;
    if (sent.optInKeywords) {
      const optOut = new Map<string, string>();
      if (group === 'channelSms') for (const word of DEFAULT_OPT_OUT_KEYWORDS) optOut.set(word, `the carrier-standard opt-out ${word}, always honoured`);
      (optOutKeywords ?? []).forEach((word, i) => optOut.set(normaliseKeyword(word), `optOutKeywords[${i}]`));
      sent.optInKeywords.forEach((word, i) => {
        const clash = optOut.get(normaliseKeyword(word));
        if (clash !== undefined) throw fieldError(`${path}.optInKeywords[${i}]`, `"${word}" is an opt-out keyword too (${clash}): ${BOTH}`);
      });
    } else if (sent.optOutKeywords && optInKeywords) {
      const optIn = new Map(optInKeywords.map((word, i) => [normaliseKeyword(word), i]));
      sent.optOutKeywords.forEach((word, i) => {
        const clash = optIn.get(normaliseKeyword(word));
        if (clash !== undefined) throw fieldError(`${path}.optOutKeywords[${i}]`, `"${word}" is an opt-in keyword too (optInKeywords[${clash}]): ${BOTH}`);
      });
    }
  }
}

function checkRepeats(path: string, words: readonly string[]): void {
  const seen = new Map<string, number>();
  words.forEach((word, i) => {
    const key = normaliseKeyword(word);
    const first = seen.get(key);
    if (first !== undefined) throw fieldError(`${path}[${i}]`, `"${word}" repeats [${first}] "${words[first]}": keywords match ignoring case, accents and punctuation at either end`);
    seen.set(key, i);
  });
}
