import { MicroBatcher, ok } from '../batching/micro-batcher';

/** An organization's `sms-status` webhook. */
export interface WebhookTarget {
  url: string;
  /** Null when the webhook has none (the column allows it; the admin API always sets one). */
  secret: string | null;
}

interface Db {
  query(sql: string, params: unknown[]): Promise<Array<{ organization_id: string; url: string; secret: string | null }>>;
}

/**
 * How long a read webhook is used (ADR 0323): an operator's new URL or secret reaches first
 * attempts within this, and retries at once (they read the webhook at each attempt, ADR 0155).
 */
export const TARGET_TTL_MS = 1000;

/**
 * The webhook of each organization whose reports go out, read for all organizations asked at
 * once (one statement per batch of lookups) and kept TARGET_TTL_MS; null when it has none (any
 * more).
 */
export class WebhookTargets {
  private readonly cache = new Map<string, { at: number; target: Promise<WebhookTarget | null> }>();
  private readonly reads = new MicroBatcher<string, WebhookTarget | null>({
    maxBatch: 100,
    maxInFlight: 1,
    run: async (organizationIds) => {
      const rows = await this.db.query(
        `SELECT organization_id::text AS organization_id, url, secret FROM webhooks WHERE kind = 'sms-status' AND organization_id = ANY($1::uuid[])`,
        [organizationIds],
      );
      const byOrganization = new Map(rows.map((r) => [r.organization_id, { url: r.url, secret: r.secret }]));
      return organizationIds.map((id) => ok(byOrganization.get(id) ?? null));
    },
  });

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  of(organizationId: string): Promise<WebhookTarget | null> {
    const cached = this.cache.get(organizationId);
    if (cached && this.now() - cached.at < TARGET_TTL_MS) return cached.target;
    const target = this.reads.submit(organizationId);
    const entry = { at: this.now(), target };
    this.cache.set(organizationId, entry);
    // A failed read is not kept: the next report asks again.
    target.catch(() => this.cache.get(organizationId) === entry && this.cache.delete(organizationId));
    if (this.cache.size > 10_000) this.cache.delete(this.cache.keys().next().value!);
    return target;
  }
}
