import type { z } from 'zod';

/**
 * Characters a client name must not hold: controls (C0, DEL, C1), line and paragraph separators,
 * and the bidirectional formatting characters (marks, embeddings, overrides, isolates). The
 * consent screen shows the name in a sentence; an override there reverses the text after it, a
 * line break splits it, so a client could make the user read something the page does not say.
 * Letters of right-to-left scripts are fine: the screen shows every name isolated (`<bdi>`).
 */
const SPOOFING = /[\p{Cc}\p{Zl}\p{Zp}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
const SPOOFING_ALL = new RegExp(SPOOFING.source, 'gu');

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** A registration's or a metadata document's `client_name` holds none of them (ADR 0143). */
export const displayable = (value: string, ctx: z.RefinementCtx) => {
  const found = SPOOFING.exec(value)?.[0];
  if (found !== undefined) ctx.addIssue({ code: 'custom', message: `must not contain control, line-breaking or bidirectional formatting characters (${codePoint(found)})` });
};

/** A name as shown: any such character (in a row stored before they were refused) as U+FFFD. */
export const displayName = (name: string) => name.replace(SPOOFING_ALL, '\uFFFD');
