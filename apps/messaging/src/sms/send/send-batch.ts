import { beginWith, DATA_SOURCE } from '@meld/db';
import { traceHeaders } from '@meld/kafka';
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { escapeLiteral, type PoolClient } from 'pg';
import type { DataSource } from 'typeorm';
import { type BatchOutcome, MicroBatcher, failed, ok } from '../../batching/micro-batcher';
import { numberedRows } from '../../batching/numbered-rows';
import { WriteStatement } from '../../batching/write-statement';
import { INDEX_PLANS } from '../../db/index-plans';
import { LinksRepository } from '../../links/links.repository';
import type { TemplateLink } from '../../links/text-template';
import { SendQueue } from '../delivery/send-queue';
import type { SmsEncoding } from '../text/sms-parts';
import { StatusWriter } from '../status/status-writer';
import { fromUnits, toUnits } from './money';
import { refuse } from './refusal';

/** A message a request has checked and wants stored. */
export interface NewSms {
  id: string;
  projectId: string;
  organizationId: string;
  senderId: string;
  audienceId: string | null;
  destination: string;
  country: string;
  text: string;
  encoding: SmsEncoding;
  messagesCount: number;
  pricePerSms: number;
  idempotencyKey: string | null;
  requestHash: string;
  response: unknown;
  /** Prepaid funds to reserve, in ten-thousandths (0: not prepaid). */
  cost: bigint;
  links: readonly TemplateLink[];
}

/** `stored`: committed and queued; `duplicate`: a twin with the same Idempotency-Key was stored first. */
export type StoreResult = 'stored' | 'duplicate';

interface Pending extends NewSms {
  trace?: Record<string, string>;
}

const INSERT_MESSAGES_SQL = `INSERT INTO sms_messages (id, project_id, organization_id, sender_id, audience_id, destination, country, text, encoding, messages_count, price_per_sms,
                                 idempotency_key, request_hash, response, reserved_funds, send_job)
       SELECT v.id, v.project_id, v.organization_id, v.sender_id, v.audience_id, v.destination, v.country, v.text, v.encoding, v.messages_count, v.price_per_sms,
              v.idempotency_key, v.request_hash, v.response, v.reserved_funds, $2::uuid
         FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, project_id uuid, organization_id uuid, sender_id uuid, audience_id uuid, destination text, country text,
              text text, encoding text, messages_count int, price_per_sms numeric, idempotency_key text, request_hash text, response jsonb, reserved_funds numeric, n int)
        ORDER BY v.n
       ON CONFLICT (project_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id`;
/** The INSERT's prepared statement (ADR 0322), run in the batch's transaction on index plans. */
const INSERT_MESSAGES = 'meld-messaging-send-insert';

/** The 422 of a message its organization's funds cannot cover. */
export const insufficientFunds = (cost: bigint) => refuse('insufficient_funds', 'not enough funds for this SMS', { cost: Number(fromUnits(cost)) });

/** The prepaid organizations of a batch, locked in id order (values as literals: sent with BEGIN). */
const lockFundsSql = (ids: readonly string[]) =>
  `SELECT id, funds::text FROM organizations WHERE id = ANY(ARRAY[${ids.map(escapeLiteral).join(',')}]::uuid[]) ORDER BY id FOR UPDATE`;

/** Sends stored per transaction at most, and transactions at once (ADR 0202). */
const MAX_BATCH = 200;
const MAX_IN_FLIGHT = 3;

/**
 * Stores the messages of concurrent send requests in one transaction (group commit, ADR
 * 0202): the prepaid organizations' rows locked once, funds checked exactly per message in
 * arrival order (never below zero), the messages in one multi-row INSERT, the funds, links,
 * history and outbox rows in one more statement (ADR 0254; no webhook report for `enqueued`,
 * ADR 0351), then one job carrying them all on the send queue (ADR 0324). Every request is
 * answered only after the COMMIT that holds its rows.
 */
@Injectable()
export class SendBatch {
  private readonly batcher = new MicroBatcher<Pending, StoreResult>({ run: (items) => this.run(items), maxBatch: MAX_BATCH, maxInFlight: MAX_IN_FLIGHT });

  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly links: LinksRepository,
    private readonly status: StatusWriter,
    private readonly queue: SendQueue,
  ) {}

  /** Resolves once the message is committed (or its twin was); rejects with the 422 of too few funds. */
  store(sms: NewSms): Promise<StoreResult> {
    // Taken here, in the request's context: the job continues the request's trace (ADR 0187).
    return this.batcher.submit({ ...sms, trace: traceHeaders() });
  }

  private async run(items: readonly Pending[]): Promise<Array<BatchOutcome<StoreResult>>> {
    // Nothing is stored while the queue does not answer: each request gets a 503 within about MELD_REDIS_TIMEOUT_MS (ADR 0284).
    const unreachable = await this.queue.checkReachable();
    if (unreachable) return items.map(() => failed(unreachable));
    // BEGIN with the prepaid organizations' lock in one round trip, on index plans for the prepared writes (ADR 0322).
    const charged = [...new Set(items.filter((sms) => sms.cost > 0n).map((sms) => sms.organizationId))];
    const tx = await beginWith<{ id: string; funds: string }>(this.ds, lockFundsSql(charged), { settings: INDEX_PLANS });
    let kept: Pending[] = [];
    // Whether the batch owes webhook reports; the initial `enqueued` owes none (ADR 0351), so the pump is not woken for nothing.
    let reported = false;
    // The batch's send job (ADR 0324): stored on its rows, so the sweep asks BullMQ about it.
    const sendJob = randomUUID();
    let results: Array<BatchOutcome<StoreResult>>;
    try {
      results = this.reserve(tx.rows, items);
      const candidates = items.filter((_, i) => results[i]!.ok);
      const stored = await this.insert(tx.client, candidates, sendJob);
      items.forEach((sms, i) => {
        if (results[i]!.ok && !stored.has(sms.id)) results[i] = ok('duplicate');
      });
      kept = candidates.filter((sms) => stored.has(sms.id));
      // Funds, links and what every status change writes: one statement (ADR 0254).
      const write = new WriteStatement();
      this.charge(write, kept);
      this.links.insert(write, kept.map((sms) => ({ projectId: sms.projectId, smsId: sms.id, links: sms.links })));
      const at = new Date();
      reported = this.status.record(
        write,
        kept.map((sms) => ({
          row: {
            id: sms.id, project_id: sms.projectId, organization_id: sms.organizationId, audience_id: sms.audienceId, sender_id: sms.senderId, status: 'enqueued',
            messages_count: sms.messagesCount, reserved_funds: fromUnits(sms.cost), member_data_source_id: null, member_user_id: null,
          },
          change: { status: 'enqueued' },
          at,
        })),
      );
      if (kept.length) await write.run(tx.client);
      await tx.commit();
    } finally {
      await tx.release();
    }
    if (kept.length) {
      this.status.committed(reported);
      // After COMMIT: a crash before this add leaves the messages `enqueued`, and the sweep queues them.
      await this.queue.addCommitted({ id: sendJob, messages: kept.map((sms) => ({ smsId: sms.id, trace: sms.trace })) });
    }
    return results;
  }

  /** Refuses, in arrival order, what the locked organizations' funds cannot cover. */
  private reserve(locked: ReadonlyArray<{ id: string; funds: string }>, items: readonly Pending[]): Array<BatchOutcome<StoreResult>> {
    const results: Array<BatchOutcome<StoreResult>> = items.map(() => ok('stored'));
    const left = new Map(locked.map((r) => [r.id, toUnits(r.funds)]));
    items.forEach((sms, i) => {
      if (sms.cost === 0n) return;
      const funds = left.get(sms.organizationId) ?? 0n;
      if (sms.cost > funds) results[i] = failed(insufficientFunds(sms.cost));
      else left.set(sms.organizationId, funds - sms.cost);
    });
    return results;
  }

  /**
   * The message rows; a row whose Idempotency-Key is taken is skipped (a concurrent twin blocks
   * here until its transaction ends). Rows go in key order so two batches never wait on each
   * other's keys in a cycle.
   */
  private async insert(client: PoolClient, items: readonly Pending[], sendJob: string): Promise<Set<string>> {
    if (!items.length) return new Set();
    const ordered = [...items].sort((a, b) => `${a.projectId}/${a.idempotencyKey ?? ''}`.localeCompare(`${b.projectId}/${b.idempotencyKey ?? ''}`));
    const { rows } = await client.query<{ id: string }>({
      name: INSERT_MESSAGES,
      text: INSERT_MESSAGES_SQL,
      values: [
        numberedRows(
          ordered.map((sms) => ({
            id: sms.id, project_id: sms.projectId, organization_id: sms.organizationId, sender_id: sms.senderId, audience_id: sms.audienceId, destination: sms.destination,
            country: sms.country, text: sms.text, encoding: sms.encoding, messages_count: sms.messagesCount, price_per_sms: sms.pricePerSms, idempotency_key: sms.idempotencyKey,
            request_hash: sms.requestHash, response: sms.response, reserved_funds: fromUnits(sms.cost),
          })),
        ),
        sendJob,
      ],
    });
    return new Set(rows.map((r) => r.id));
  }

  /** Takes the stored messages' costs from their (locked) organizations: a part of the batch's write. */
  private charge(write: WriteStatement, kept: readonly Pending[]): void {
    const totals = new Map<string, bigint>();
    for (const sms of kept) if (sms.cost > 0n) totals.set(sms.organizationId, (totals.get(sms.organizationId) ?? 0n) + sms.cost);
    if (!totals.size) return;
    write.add(
      `UPDATE organizations o SET funds = o.funds - t.total FROM unnest(${write.param([...totals.keys()])}::uuid[], ${write.param([...totals.values()].map(fromUnits))}::numeric[]) AS t(id, total)
        WHERE o.id = t.id`,
    );
  }
}
