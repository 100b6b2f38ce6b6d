/**
 * Exact money for the funds check (ADR 0202): amounts as integer ten-thousandths, the scale of
 * `organizations.funds` and `sms_messages.reserved_funds` (numeric(14,4)), so a batch adds
 * costs without float error (25 × 0.04 must fit in 1.0000 exactly).
 */
const SCALE = 4;
const ONE = 10n ** BigInt(SCALE);

/**
 * A decimal string (as Postgres prints numeric) in ten-thousandths, later digits rounded half away
 * from zero. Funds may be below zero (the admin API allows it): the sign applies to the whole
 * value, so `-0.5000` is -5000, not 0 + 5000.
 */
export function toUnits(decimal: string): bigint {
  const text = decimal.trim();
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = text.replace(/^[-+]/, '').split('.');
  const kept = BigInt(whole || '0') * ONE + BigInt((fraction.slice(0, SCALE) || '0').padEnd(SCALE, '0'));
  const units = fraction.length > SCALE && Number(fraction[SCALE]) >= 5 ? kept + 1n : kept;
  return negative ? -units : units;
}

export function fromUnits(units: bigint): string {
  const fraction = (units % ONE).toString().padStart(SCALE, '0');
  return `${units / ONE}.${fraction}`;
}

/** The cost of a message: its price per part times its parts, at the funds' scale. */
export function costUnits(pricePerSms: string, parts: number): bigint {
  const [whole = '0', fraction = ''] = pricePerSms.trim().split('.');
  const digits = fraction.length;
  const exact = BigInt(`${whole}${fraction}` || '0') * BigInt(parts);
  return toUnits(digits ? `${exact / 10n ** BigInt(digits)}.${(exact % 10n ** BigInt(digits)).toString().padStart(digits, '0')}` : exact.toString());
}
