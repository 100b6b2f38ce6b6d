import { errorSummary } from '@meld/contracts';
import { DATA_SOURCE, rawPool } from '@meld/db';
import { RetryLaterException } from '@meld/platform';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DatabaseError } from 'pg';
import type { DataSource } from 'typeorm';
import type { ReadinessChannel, SetupSnapshot } from './readiness-rules';

/**
 * Everything readiness reads, in ONE statement: Postgres gives a statement one snapshot, so
 * a report never mixes the state before and after a concurrent change (a sender paused
 * between two reads). Nothing is cached: the next call sees the next change (ADR 0131).
 * Per sender the statement projects only the country facts the rules read (accepted
 * countries; those of them not effectively active; those without a price): building a
 * JSON object per country row cost ~10 ms per report at 50 senders × 100 countries, the
 * facts ~2 ms (bench/scenarios/readiness.ts).
 */
const SNAPSHOT_SQL = `
SELECT p.legal_profile_status AS "legalProfileStatus",
       p.default_sms_sender AS "defaultSmsSender",
       o.prepaid,
       o.funds::float8 AS funds,
       EXISTS (SELECT 1 FROM audience_contacts a WHERE a.project_id = p.id) AS "hasAudienceContact",
       COALESCE((
         SELECT json_agg(json_build_object(
                  'id', s.id, 'channel', s.channel, 'alias', s.alias, 'name', s.name, 'status', s.status,
                  'acceptedCountries', COALESCE(c.accepted, '{}'),
                  'notActive', COALESCE(c.not_active, '[]'),
                  'unpriced', COALESCE(c.unpriced, '[]'))
                ORDER BY s.created_at, s.id)
           FROM senders s
           LEFT JOIN LATERAL (
             SELECT array_agg(country ORDER BY country) AS accepted,
                    json_agg(json_build_array(country, effective_status) ORDER BY country) FILTER (WHERE effective_status <> 'active') AS not_active,
                    json_agg(json_build_array(country, effective_status) ORDER BY country) FILTER (WHERE price <= 0) AS unpriced
               FROM sender_countries WHERE sender_id = s.id AND accepted) c ON true
          WHERE s.project_id = p.id AND ($3::text IS NULL OR s.channel = $3)), '[]'::json) AS senders
  FROM projects p
  JOIN organizations o ON o.id = p.organization_id
 WHERE p.id = $1 AND p.organization_id = $2`;

/** Retry-After of a report Postgres did not serve, as the gateway's for its own stores. */
const RETRY_AFTER_S = 5;

/**
 * Postgres could not serve the statement, through no fault of the statement: a connection
 * refused, lost or timed out (no SQLSTATE), a connection exception (class 08), insufficient
 * resources (53) or operator intervention (57: shutdown, cancel, statement_timeout).
 */
function unavailable(err: unknown): boolean {
  return !(err instanceof DatabaseError) || /^(08|53|57)/.test(err.code ?? '');
}

@Injectable()
export class ReadinessRepository {
  private readonly log = new Logger('readiness');

  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /**
   * The project's setup (its senders, or one channel's), or null when the project is gone. A
   * Postgres down, stalled or not yet connected is a 503 with Retry-After within the bounds,
   * not a 500 or a held request (ADR 0131). pg-pool's query drops a connection whose statement
   * failed, so one left stalled is not handed to the next report.
   */
  async snapshot(organizationId: string, projectId: string, channel: ReadinessChannel | null): Promise<SetupSnapshot | null> {
    try {
      if (!this.ds.isInitialized) throw new Error('postgres is not connected');
      // A request path: the statement (~2 ms at 50 senders × 100 countries) waits at most
      // MELD_POSTGRES_REQUEST_TIMEOUT_MS for its answer, a new connection's handshake the pool's
      // connectionTimeoutMillis (ADR 0360).
      const { rows } = await rawPool(this.ds).query<SetupSnapshot>(SNAPSHOT_SQL, [projectId, organizationId, channel]);
      return rows[0] ?? null;
    } catch (err) {
      if (!unavailable(err)) throw err;
      this.log.warn(`report not served, postgres unavailable: ${errorSummary(err)}`);
      throw new RetryLaterException('the readiness store (Postgres) did not answer: retry later', RETRY_AFTER_S);
    }
  }
}
