import { type Destination, destinationOf } from '@meld/contracts';

/** The first valid mobile of a contact (`_phone_mobile` may hold one value or several). */
export function contactDestination(attributes: Readonly<Record<string, unknown>>, locale: string): Destination | null {
  const value = Object.hasOwn(attributes, '_phone_mobile') ? attributes._phone_mobile : undefined;
  for (const raw of Array.isArray(value) ? value : [value]) {
    const d = typeof raw === 'string' ? destinationOf(raw, locale) : null;
    if (d) return d;
  }
  return null;
}
