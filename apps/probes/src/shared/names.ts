/**
 * The words of a catalogue name: `lastOrderAt`, `last-order_at` → ['last', 'order', 'at'].
 * An acronym ends where a capitalised word starts (`APIToken` → ['api', 'token'], `SKUId` →
 * ['sku', 'id']), except before a lone plural s (`userIDs` → ['user', 'ids']): without that
 * split `APIToken` read as one word, not as a token, and its values were listed (ADR 0163).
 */
export function words(uid: string): string[] {
  return uid
    .replace(/([A-Z])(?=[A-Z](?!s(?![a-z]))[a-z])/g, '$1 ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}
