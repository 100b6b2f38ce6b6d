import { SegmentedMessage } from 'sms-segments-calculator';

export type SmsEncoding = 'GSM-7' | 'UCS-2';

export interface SmsParts {
  encoding: SmsEncoding;
  /** Parts the SMSC is sent (each billed at the sender's price). */
  messagesCount: number;
}

/** ASCII characters of the GSM 03.38 basic table (one septet each; `[]{}\\^|~` are extension pairs, `` ` `` is not GSM). */
const ONE_SEPTET_ASCII = /^[\n\r !"#$%&'()*+,\-./0-9:;<=>?@A-Z_a-z]*$/;

/**
 * Encoding and parts of a text as sent (system design §4): GSM-7 when every character is in
 * the GSM 03.38 basic or extension table (an extension character takes 2 septets), 160
 * septets in one part, 153 per part when concatenated, an escape pair never split across
 * parts; else UCS-2, 70 code units alone, 67 per part, a surrogate pair never split.
 * Twilio's segment calculator implements exactly this and is table-tested against these
 * rules in sms-parts.spec.ts (ADR 0132), so it is used rather than rewritten.
 */
export function smsParts(text: string): SmsParts {
  // Most texts are plain ASCII of one septet a character: their parts need no table walk
  // (the calculator splits graphemes, a few % of messaging's CPU per send, ADR 0278).
  if (ONE_SEPTET_ASCII.test(text)) return { encoding: 'GSM-7', messagesCount: text.length <= 160 ? 1 : Math.ceil(text.length / 153) };
  const message = new SegmentedMessage(text, 'auto');
  return { encoding: message.encodingName === 'GSM-7' ? 'GSM-7' : 'UCS-2', messagesCount: message.segmentsCount };
}
