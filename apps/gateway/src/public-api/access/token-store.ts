import { NO_PLAN_GATES, type PlanGates, type TokenRecord, scopesOnPlan } from '@meld/auth';
import type { Plan, Scope } from '@meld/contracts';
import { query } from './store-unavailable';
import { TtlCache } from './ttl-cache';

export type TokenLookup = { status: 'ok'; token: TokenRecord } | { status: 'unknown' | 'revoked' | 'expired' | 'other-resource' };

const UNKNOWN: TokenLookup = { status: 'unknown' };

interface Cached {
  token: TokenRecord;
  revoked: boolean;
  expiresAt: number | null;
  /** RFC 8707 resource an OAuth token was issued for; null: not bound (this API). */
  resource: string | null;
}

interface Row {
  id: string;
  kind: TokenRecord['kind'];
  organization_id: string;
  scopes: Scope[];
  projects: string[];
  data_source_id: string | null;
  revoked_at: Date | null;
  expires_at: Date | null;
  resource: string | null;
  plan: Plan;
}

const SQL = `SELECT t.id, t.kind, t.organization_id, t.scopes, t.projects, t.data_source_id, t.revoked_at, t.expires_at, t.resource, o.plan
  FROM tokens t JOIN organizations o ON o.id = t.organization_id WHERE t.secret_hash = $1`;

/**
 * Tokens by the SHA-256 of their secret, cached in process (LRU + TTL). Revocation evicts
 * at once (Redis pub/sub, see CacheInvalidation). Unknown hashes are cached too, briefly
 * and in an LRU of their own (random guesses cannot flush the real tokens out): a caller
 * repeating a bad token costs one query per `negativeTtlMs`, and a token created after
 * being tried works within that time (ADR 0123).
 */
export class TokenStore {
  private readonly cache: TtlCache<string, Cached>;
  private readonly unknown: TtlCache<string, true>;
  /** Bumped on every eviction: a lookup that raced with one is not cached (it may predate the revocation). */
  private generation = 0;

  constructor(
    private readonly ds: { isInitialized: boolean; query(sql: string, params?: unknown[]): Promise<unknown> },
    ttlMs: number,
    negativeTtlMs: number,
    /** This API as an RFC 8707 resource (`<MELD_PUBLIC_URL>/v1`): tokens bound to another are refused (ADR 0146). */
    private readonly apiResource: string,
    maxEntries = 10_000,
    /** Plan-gated scopes (ADR 0328): a token carries only what its organization's plan unlocks. */
    private readonly planGates: PlanGates = NO_PLAN_GATES,
  ) {
    this.cache = new TtlCache(maxEntries, ttlMs);
    this.unknown = new TtlCache(maxEntries, negativeTtlMs);
  }

  async byHash(hash: string, now = Date.now()): Promise<TokenLookup> {
    const cached = this.cached(hash, now);
    if (cached) return cached;
    const generation = this.generation;
    const [row] = await query<Row>(this.ds, SQL, [hash]);
    if (!row) {
      this.unknown.set(hash, true);
      return UNKNOWN;
    }
    const scopes = scopesOnPlan(row.scopes, row.plan, this.planGates);
    const planGatedScopes = row.scopes.filter((s) => !scopes.includes(s));
    const entry: Cached = {
      token: {
        id: row.id,
        kind: row.kind,
        organizationId: row.organization_id,
        plan: row.plan,
        scopes,
        // Only to explain a refusal (ADR 0328); absent on the common token that has none.
        ...(planGatedScopes.length ? { planGatedScopes } : {}),
        projects: row.projects,
        dataSourceId: row.data_source_id,
      },
      revoked: row.revoked_at !== null,
      expiresAt: row.expires_at ? row.expires_at.getTime() : null,
      resource: row.resource,
    };
    if (generation === this.generation) this.cache.set(hash, entry);
    return this.check(entry, now);
  }

  /** The lookup's answer when memory holds it (known or known unknown), else undefined: no query, no promise (ADR 0270). */
  cached(hash: string, now = Date.now()): TokenLookup | undefined {
    const entry = this.cache.get(hash);
    if (entry) return this.check(entry, now);
    return this.unknown.get(hash) ? UNKNOWN : undefined;
  }

  private check(entry: Cached, now: number): TokenLookup {
    if (entry.revoked) return { status: 'revoked' };
    if (entry.expiresAt !== null && entry.expiresAt <= now) return { status: 'expired' };
    if (entry.resource !== null && entry.resource !== this.apiResource) return { status: 'other-resource' };
    return { status: 'ok', token: entry.token };
  }

  evictToken(tokenId: string): void {
    this.generation++;
    this.cache.deleteWhere((e) => e.token.id === tokenId);
  }

  clear(): void {
    this.generation++;
    this.cache.clear();
    this.unknown.clear();
  }
}
