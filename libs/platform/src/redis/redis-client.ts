import Redis, { type RedisOptions } from 'ioredis';

/**
 * What a client is for, which decides how it waits (ADR 0122):
 * - `request`: commands on a request path. No offline queue and no retries: a command
 *   fails at once while disconnected and after `timeoutMs` when Redis stalls, so the
 *   caller answers 503 within its budget instead of holding the request.
 * - `subscriber`: a pub/sub connection. SUBSCRIBE waits for the connection (offline queue
 *   on) and has no command timeout: it serves no request, and a timed-out SUBSCRIBE would
 *   leave the process deaf to invalidations for good.
 * - `queue`: a BullMQ worker, which needs `maxRetriesPerRequest: null` and blocking commands
 *   (a command timeout would cut its blocking reads). A queue that only adds jobs on a
 *   request path is a `request` client (ADR 0284).
 */
export type RedisRole = 'request' | 'subscriber' | 'queue';

export interface RedisClientOptions {
  /** CLIENT SETNAME, e.g. `meld-gateway-ratelimit`: who holds a connection shows in CLIENT LIST. */
  name: string;
  role: RedisRole;
  /** Longest wait for one command (`request`); the connect timeout is twice this. */
  timeoutMs: number;
  extra?: RedisOptions;
}

const RECONNECT_CAP_MS = 2000;

/** Every ioredis client of every app comes from here, so none can wait forever. */
export function createRedisClient(url: string, { name, role, timeoutMs, extra }: RedisClientOptions): Redis {
  const common: RedisOptions = {
    connectionName: name,
    connectTimeout: 2 * timeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 200, RECONNECT_CAP_MS),
  };
  const byRole: Record<RedisRole, RedisOptions> = {
    request: { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: timeoutMs },
    subscriber: { maxRetriesPerRequest: null },
    queue: { maxRetriesPerRequest: null },
  };
  return new Redis(url, { ...common, ...byRole[role], ...extra });
}
