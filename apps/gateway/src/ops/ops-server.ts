import { createServer, type Server } from 'node:http';
import { envVars, loadConfig, metricsRegistry } from '@meld/platform';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { z } from 'zod';
import { SystemHealth } from '../health/system-health';

/**
 * The gateway's operations port (ADR 0105): Prometheus metrics and the detailed health
 * reports (which app or store is down, and why) on a listener of their own, never on the
 * public port. Kubernetes exposes only the public port through the Service and Ingress;
 * Prometheus scrapes this one, and NetworkPolicies keep it to the monitoring namespace.
 */
@Injectable()
export class OpsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('ops');
  private server?: Server;

  constructor(private readonly health: SystemHealth) {}

  async onApplicationBootstrap(): Promise<void> {
    const { MELD_HOST: host, MELD_OPS_PORT: port } = loadOpsConfig();
    this.server = createServer((req, res) => {
      const send = (code: number, body: string, type = 'application/json') => res.writeHead(code, { 'content-type': type }).end(body);
      const path = (req.url ?? '').split('?')[0];
      const answer =
        req.method !== 'GET'
          ? Promise.resolve(send(405, JSON.stringify({ statusCode: 405, error: 'Method Not Allowed', message: 'GET only' })))
          : path === '/metrics'
            ? metricsRegistry.metrics().then((text) => send(200, text, 'text/plain; version=0.0.4'))
            : path === '/healthz'
              ? this.health.report().then((r) => send(r.status === 'ok' ? 200 : 503, JSON.stringify(r)))
              : path === '/readyz'
                ? this.health.own().then((r) => send(r.status === 'up' ? 200 : 503, JSON.stringify(r)))
                : Promise.resolve(send(404, JSON.stringify({ statusCode: 404, error: 'Not Found', message: 'operations port: /metrics, /healthz, /readyz' })));
      answer.catch((err: Error) => send(500, JSON.stringify({ statusCode: 500, error: 'Internal Server Error', message: err.message })));
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, () => resolve());
    });
    this.log.log(`operations port on ${host}:${this.port()}`);
  }

  /** The port actually bound (MELD_OPS_PORT 0 picks a free one). */
  port(): number {
    const address = this.server?.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  async onApplicationShutdown(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** `MELD_OPS_PORT`, default the public port + 100 (8180 locally: below the apps' 8081-8087 offsets of any test gateway). */
export function loadOpsConfig(env: NodeJS.ProcessEnv = process.env) {
  const publicPort = Number(env.MELD_PORT ?? 8080);
  return loadConfig(z.object({ MELD_HOST: envVars.host, MELD_OPS_PORT: envVars.port(publicPort === 0 ? 0 : publicPort + 100) }), env);
}
