import { randomBytes } from 'node:crypto';

/** Lowercase letters, digits and inner dashes: safe in a URL path and readable in logs. */
export const UID_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const UID_RULE = 'must be 1-64 lowercase letters, digits or dashes, not starting or ending with a dash';

/** `Acme Shop (EU)` → `acme-shop-eu`; diacritics folded; `fallback` when nothing readable is left. */
export function slugify(name: string, fallback: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return slug || fallback;
}

/** Candidates for a readable unique uid: the slug itself, then the slug with a short random suffix. */
export function* uidCandidates(name: string, fallback: string, attempts = 6): Generator<string> {
  const base = slugify(name, fallback);
  yield base;
  for (let i = 1; i < attempts; i++) yield `${base}-${randomBytes(3).toString('hex').slice(0, 4)}`;
}
