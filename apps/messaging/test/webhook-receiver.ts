import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status the receiver answered with. */
  answered: number;
}

/**
 * A webhook receiver on loopback that records what it got. `stop()` closes the port (the
 * receiver is down: connections are refused) and `start()` opens the same port again;
 * `answer` sets the status it replies with, or `hang` to never reply.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  answer: number | 'hang' = 204;
  private server?: Server;
  private port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks/sms`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (this.answer === 'hang') return;
        const answered = this.answer;
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered });
        res.writeHead(answered).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** The reports about one message, in arrival order. */
  about(smsId: string): Array<Received & { json: Record<string, unknown> }> {
    return this.received.map((r) => ({ ...r, json: JSON.parse(r.body) })).filter((r) => r.json.id === smsId);
  }
}
