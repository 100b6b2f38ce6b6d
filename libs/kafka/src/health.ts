import type { Admin } from 'kafkajs';
import { createKafkaClient, type KafkaConnectionOptions } from './client';

export type KafkaHealth =
  | { ok: true; brokers: number; latencyMs: number }
  | { ok: false; error: string; latencyMs: number };

export interface KafkaHealthOptions {
  /** A readiness probe must answer before the kubelet gives up; default 1,500 ms. */
  timeoutMs?: number;
  /** Also require these topics to exist (a consumer is not ready without its topics). */
  topics?: readonly string[];
}

/**
 * One metadata round trip against a connected admin client, bounded by a timeout so a
 * hung broker makes /readyz answer 503 quickly instead of hanging it.
 */
export async function kafkaHealth(admin: Admin, options: KafkaHealthOptions = {}): Promise<KafkaHealth> {
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? 1500;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from Kafka within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const check = async (): Promise<number> => {
      const cluster = await admin.describeCluster();
      if (options.topics?.length) {
        const present = new Set(await admin.listTopics());
        const missing = options.topics.filter((t) => !present.has(t));
        if (missing.length) throw new Error(`Kafka topics missing: ${missing.join(', ')}`);
      }
      return cluster.brokers.length;
    };
    const brokers = await Promise.race([check(), timeout]);
    return { ok: true, brokers, latencyMs: Date.now() - started };
  } catch (err) {
    return { ok: false, error: (err as Error).message, latencyMs: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

export interface KafkaHealthCheck {
  check(): Promise<KafkaHealth>;
  close(): Promise<void>;
}

/**
 * A health check that owns its admin client: connects lazily, and reconnects on the next
 * check after a failure, so a broker restart heals without restarting the app.
 */
export function createKafkaHealthCheck(options: KafkaConnectionOptions & KafkaHealthOptions): KafkaHealthCheck {
  const timeoutMs = options.timeoutMs ?? 1500;
  // A connection attempt must not outlive the check that started it.
  const kafka = createKafkaClient({ kafkaLogLevel: 'nothing', connectionTimeoutMs: timeoutMs, retries: 0, ...options });
  let connecting: Promise<Admin> | undefined;

  const connected = (): Promise<Admin> => {
    connecting ??= (async () => {
      const a = kafka.admin({ retry: { retries: 0 } });
      await a.connect();
      return a;
    })().catch((err: unknown) => {
      connecting = undefined;
      throw err;
    });
    return connecting;
  };

  const drop = async (): Promise<void> => {
    const pending = connecting;
    connecting = undefined;
    // An admin still connecting is closed once (if ever) it connects; nobody waits for that.
    void pending?.then((a) => a.disconnect()).catch(() => undefined);
  };

  return {
    async check() {
      const started = Date.now();
      let a: Admin;
      try {
        let timer: NodeJS.Timeout | undefined;
        a = await Promise.race([
          connected(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`cannot connect to Kafka within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]).finally(() => clearTimeout(timer));
      } catch (err) {
        return { ok: false, error: (err as Error).message, latencyMs: Date.now() - started };
      }
      const result = await kafkaHealth(a, { ...options, timeoutMs: Math.max(1, timeoutMs - (Date.now() - started)) });
      if (!result.ok) await drop();
      return result;
    },
    close: drop,
  };
}
