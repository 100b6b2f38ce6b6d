import type { OutboxMessage } from '@meld/db';
import type { DataSource } from 'typeorm';
import type { WebhookConfig } from './webhook-config';
import type { SpilledReport, WebhookDeliveries } from './webhook-deliveries.repository';
import { owedReport, type OwedReport } from './webhook-outbox';
import type { PostResult, WebhookPoster } from './webhook-poster';
import { WebhookSender } from './webhook-sender';

const ORG_A = '00000000-0000-4000-8000-00000000000a';
const ORG_B = '00000000-0000-4000-8000-00000000000b';
const PROJECT = '00000000-0000-4000-8000-0000000000ff';
const CONFIG: WebhookConfig = { allowPrivate: true, timeoutMs: 1000, retryForMs: 86_400_000, deliveredRetentionMs: 60_000 };

function report(organizationId: string, smsId: string, status: OwedReport['status'], at = new Date().toISOString()): OwedReport {
  return owedReport(organizationId, { schemaVersion: 1, projectId: PROJECT, smsId, audienceId: null, status, messagesCount: 1, at });
}

const messages = (...reports: OwedReport[]): OutboxMessage[] => reports.map((r) => ({ key: r.smsId, value: r }));

/** A sender over fakes of its stores and receiver (a unit: the integration specs run it on the real ones). */
function harness(options: { answer?: (url: string, body: string) => PostResult; owed?: string[]; config?: Partial<WebhookConfig>; webhooks?: Record<string, { url: string; secret: string | null }> } = {}) {
  const webhooks = options.webhooks ?? { [ORG_A]: { url: 'http://a.example/hook', secret: 'sa' }, [ORG_B]: { url: 'http://b.example/hook', secret: 'sb' } };
  const posted: Array<{ url: string; status: string; eventId: string }> = [];
  const spilled: SpilledReport[] = [];
  const pendingAsked: string[][] = [];
  const ds = {
    query: async (_sql: string, [ids]: [string[]]) => ids.filter((id) => webhooks[id]).map((id) => ({ organization_id: id, ...webhooks[id]! })),
  } as unknown as DataSource;
  const deliveries = {
    pendingOf: async (ids: string[]) => {
      pendingAsked.push(ids);
      return new Set(ids.filter((id) => options.owed?.includes(id)));
    },
    spill: async (rows: SpilledReport[]) => void spilled.push(...rows),
  } as unknown as WebhookDeliveries;
  const poster = {
    post: async (url: string, body: string, headers: Record<string, string>) => {
      posted.push({ url, status: JSON.parse(body).status, eventId: headers['webhook-id']! });
      return options.answer?.(url, body) ?? { ok: true, statusCode: 204 };
    },
  } as unknown as WebhookPoster;
  let nudges = 0;
  const clock = { now: Date.now() };
  const sender = new WebhookSender(ds, deliveries, poster, { ...CONFIG, ...options.config }, () => nudges++, () => clock.now);
  return { sender, posted, spilled, pendingAsked, nudges: () => nudges, clock };
}

describe('WebhookSender (the first attempts of the webhook outbox, ADR 0323)', () => {
  it('attempts every report, one message in order, signed with its event id; delivered ones leave nothing behind', async () => {
    const h = harness();
    const reports = [report(ORG_A, 'm1', 'sent'), report(ORG_B, 'm2', 'rejected'), report(ORG_A, 'm1', 'delivered')];
    await h.sender.send('webhooks', messages(...reports));
    expect(h.posted.filter((p) => p.url.includes('a.example')).map((p) => p.status)).toEqual(['sent', 'delivered']);
    expect(h.posted.map((p) => p.eventId).sort()).toEqual(reports.map((r) => r.eventId).sort());
    expect([h.spilled, h.nudges()]).toEqual([[], 0]);
    // One question to the table per pass, about every message of it (ADR 0351: first reports too).
    expect(h.pendingAsked).toEqual([['m1', 'm2']]);
  });

  it('a failed attempt goes to the retries with its outcome, its message\'s later reports queue behind it; other messages still go', async () => {
    const h = harness({ answer: (url) => (url.includes('a.example') ? { ok: false, statusCode: 500, error: 'answered 500' } : { ok: true, statusCode: 204 }) });
    await h.sender.send('webhooks', messages(report(ORG_A, 'm1', 'sent'), report(ORG_A, 'm1', 'delivered'), report(ORG_B, 'm2', 'sent')));
    expect(h.posted.map((p) => `${p.url.includes('a.') ? 'a' : 'b'}:${p.status}`).sort()).toEqual(['a:sent', 'b:sent']);
    // In order: the table's `seq` is the message's line.
    expect(h.spilled.map((s) => [s.smsId, JSON.parse(s.body).status, s.status, s.attempts, s.code, s.error])).toEqual([
      ['m1', 'sent', 'pending', 1, 500, 'answered 500'],
      ['m1', 'delivered', 'pending', 0, null, null],
    ]);
    expect(h.spilled[0]!.delaySeconds).toBeGreaterThan(0);
    expect(h.nudges()).toBe(1);
  });

  it('after a failed attempt, its organization\'s next reports go straight to the retries for a while; other organizations\' still go', async () => {
    const h = harness({ answer: (url) => (url.includes('a.example') ? { ok: false, error: 'connect ECONNREFUSED' } : { ok: true, statusCode: 204 }) });
    await h.sender.send('webhooks', messages(report(ORG_A, 'm1', 'sent')));
    await h.sender.send('webhooks', messages(report(ORG_A, 'm3', 'sent'), report(ORG_B, 'm4', 'sent')));
    expect(h.posted.map((p) => `${p.url.includes('a.') ? 'a' : 'b'}:${p.status}`)).toEqual(['a:sent', 'b:sent']);
    expect(h.spilled.map((s) => [s.smsId, s.status, s.attempts])).toEqual([['m1', 'pending', 1], ['m3', 'pending', 0]]);
  });

  it('an organization that keeps failing is tried less and less often; one success brings its first attempts back', async () => {
    let up = false;
    const h = harness({ answer: () => (up ? { ok: true, statusCode: 204 } : { ok: false, error: 'connect ECONNREFUSED' }) });
    let n = 0;
    const pass = async () => {
      const before = h.posted.length;
      await h.sender.send('webhooks', messages(report(ORG_A, `m${n++}`, 'sent')));
      return h.posted.length > before ? 'attempted' : 'skipped';
    };
    const after = async (ms: number) => {
      h.clock.now += ms;
      return pass();
    };
    expect(await pass()).toBe('attempted');
    // Skipped for 30 s after the first failure, then 60 s after the second.
    expect([await after(29_000), await after(2_000), await after(59_000), await after(2_000)]).toEqual(['skipped', 'attempted', 'skipped', 'attempted']);
    up = true;
    expect(await after(120_001)).toBe('attempted');
    expect(await after(1)).toBe('attempted');
  });

  it('a message\'s first report queues behind an `enqueued` an older version left owed in the table (a rolling upgrade, ADR 0351)', async () => {
    const h = harness({ owed: ['m1', 'm2'] });
    await h.sender.send('webhooks', messages(report(ORG_A, 'm1', 'sent'), report(ORG_A, 'm1', 'delivered'), report(ORG_A, 'm2', 'failed'), report(ORG_A, 'm3', 'rejected')));
    expect(h.posted.map((p) => p.status)).toEqual(['rejected']);
    expect(h.spilled.map((s) => [s.smsId, JSON.parse(s.body).status, s.status, s.attempts])).toEqual([
      ['m1', 'sent', 'pending', 0],
      ['m1', 'delivered', 'pending', 0],
      ['m2', 'failed', 'pending', 0],
    ]);
  });

  it('a report whose message still owes an earlier one in the table queues behind it without an attempt', async () => {
    const h = harness({ owed: ['m1'] });
    await h.sender.send('webhooks', messages(report(ORG_A, 'm1', 'delivered'), report(ORG_A, 'm2', 'sent')));
    expect(h.pendingAsked).toEqual([['m1', 'm2']]);
    expect(h.posted.map((p) => p.status)).toEqual(['sent']);
    expect(h.spilled.map((s) => [s.smsId, s.status, s.attempts])).toEqual([['m1', 'pending', 0]]);
  });

  it('a failed attempt past the retry window ends failed at once', async () => {
    const h = harness({ config: { retryForMs: 0 }, answer: () => ({ ok: false, error: 'no answer within 1000 ms' }) });
    await h.sender.send('webhooks', messages(report(ORG_A, 'm1', 'sent', new Date(Date.now() - 1000).toISOString())));
    expect(h.spilled.map((s) => [s.status, s.attempts, s.code, s.error])).toEqual([['failed', 1, null, 'no answer within 1000 ms']]);
  });

  it('a webhook without a secret fails its attempt visibly; an organization whose webhook is gone is owed nothing', async () => {
    const h = harness({ webhooks: { [ORG_A]: { url: 'http://a.example/hook', secret: null } } });
    await h.sender.send('webhooks', messages(report(ORG_A, 'm1', 'sent'), report(ORG_B, 'm2', 'sent')));
    expect(h.posted).toEqual([]);
    expect(h.spilled.map((s) => [s.smsId, s.attempts, s.error])).toEqual([['m1', 1, expect.stringMatching(/has no secret/)]]);
  });

  it('fails the pass when the table does not take what it owes, so the rows stay and go again', async () => {
    const h = harness({ answer: () => ({ ok: false, statusCode: 503, error: 'answered 503' }) });
    const deliveries = (h.sender as unknown as { deliveries: { spill: () => Promise<void> } }).deliveries;
    deliveries.spill = async () => {
      throw new Error('connection terminated');
    };
    await expect(h.sender.send('webhooks', messages(report(ORG_A, 'm1', 'sent')))).rejects.toThrow('connection terminated');
  });
});
