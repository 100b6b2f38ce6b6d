/** The words of a catalogue name: `lastOrderAt`, `last-order_at` → ['last', 'order', 'at']. */
export function words(uid: string): string[] {
  return uid
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}
