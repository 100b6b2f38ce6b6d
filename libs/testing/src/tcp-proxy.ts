import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy a test can cut and restore: `stop()` refuses new connections
 * and kills open ones, exactly what a client sees when its store goes down, without
 * stopping the shared store other tests use. `pause()` keeps every connection open but
 * forwards nothing until `unpause()`: a store that stalls (GC pause, full disk, a network
 * partition that drops packets) rather than one that refuses.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private paused = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  static async start(target: string): Promise<TcpProxy> {
    const url = new URL(target);
    const proxy = new TcpProxy(url.hostname, Number(url.port));
    await proxy.resume();
    return proxy;
  }

  /** The target URL rewritten to go through the proxy. */
  via(target: string): string {
    const url = new URL(target);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  async resume(): Promise<void> {
    const server = createServer((client) => {
      const upstream = createConnection(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      // Plain data handlers, not pipe(): a piped socket resumes on its own when the other side drains.
      client.on('data', (chunk) => upstream.write(chunk));
      upstream.on('data', (chunk) => client.write(chunk));
      if (this.paused) for (const s of [client, upstream]) s.pause();
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Stops forwarding in both directions; connections (new ones too) stay open and silent. */
  pause(): void {
    this.paused = true;
    for (const s of this.sockets) s.pause();
  }

  unpause(): void {
    this.paused = false;
    for (const s of this.sockets) s.resume();
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
