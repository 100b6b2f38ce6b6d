import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Arrival times of the delivery reports, by message: the status and when it came. */
export class WebhookReceiver {
  readonly delivered = new Map<string, number>();
  arrivals: number[] = [];
  /** Reports that came again (a `webhook-id` seen before): at-least-once allows them, the bench counts them. */
  duplicates = 0;
  /** Reports received by status, duplicates included: a message owes one per change after `enqueued` (ADR 0351). */
  readonly byStatus = new Map<string, number>();
  private readonly eventIds = new Set<string>();
  private readonly server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = performance.now();
      const report = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; status: string };
      this.arrivals.push(now);
      this.byStatus.set(report.status, (this.byStatus.get(report.status) ?? 0) + 1);
      const eventId = String(req.headers['webhook-id']);
      if (this.eventIds.has(eventId)) this.duplicates++;
      else this.eventIds.add(eventId);
      if (report.status === 'delivered' && !this.delivered.has(report.id)) this.delivered.set(report.id, now);
      res.writeHead(204).end();
    });
  });

  /** Waits up to `timeoutMs` for the `delivered` report of each of `ids`; answers how many never came. */
  async settle(ids: readonly string[], timeoutMs: number): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    while (ids.some((id) => !this.delivered.has(id)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return ids.filter((id) => !this.delivered.has(id)).length;
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/sms`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
