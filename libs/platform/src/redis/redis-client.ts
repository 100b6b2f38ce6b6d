import Redis, { type Command, type RedisOptions } from 'ioredis';

/**
 * What a client is for, which decides how it waits (ADR 0122):
 * - `request`: commands on a request path. No offline queue and no retries: a command
 *   fails at once while disconnected and after `timeoutMs` when Redis stalls, so the
 *   caller answers 503 within its budget instead of holding the request. The timeout is
 *   this file's, not ioredis's `commandTimeout`: that one also fires when the reply is
 *   already waiting in the socket but the process's event loop stalled (ADR 0340).
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

/**
 * A client whose commands fail after `timeoutMs` without a reply, as ioredis's `commandTimeout`
 * would, except when the process, not Redis, was late (ADR 0340). Node runs expired timers
 * before it reads sockets in each turn of its event loop, so after a stall longer than the
 * timeout (a long GC, a CPU-throttled pod, a machine booting processes) `commandTimeout`
 * rejects a command whose reply came in microseconds: a 503 for a job BullMQ had added. Here an
 * expired timer first lets one turn of the loop read what arrived (setImmediate runs after the
 * poll phase), and gives up only if the reply is still missing.
 */
function stallTolerant(timeoutMs: number): typeof Redis {
  return class extends Redis {
    override sendCommand(command: Command, stream?: Parameters<Redis['sendCommand']>[1]): unknown {
      const timer = setTimeout(
        () =>
          setImmediate(() => {
            if (!command.isResolved) command.reject(new Error('Command timed out'));
          }),
        timeoutMs,
      );
      const clear = () => clearTimeout(timer);
      command.promise.then(clear, clear);
      return super.sendCommand(command, stream);
    }
  };
}

/** Every ioredis client of every app comes from here, so none can wait forever. */
export function createRedisClient(url: string, { name, role, timeoutMs, extra }: RedisClientOptions): Redis {
  const common: RedisOptions = {
    connectionName: name,
    connectTimeout: 2 * timeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 200, RECONNECT_CAP_MS),
  };
  const byRole: Record<RedisRole, RedisOptions> = {
    request: { enableOfflineQueue: false, maxRetriesPerRequest: 0 },
    subscriber: { maxRetriesPerRequest: null },
    queue: { maxRetriesPerRequest: null },
  };
  const Client = role === 'request' ? stallTolerant(timeoutMs) : Redis;
  return new Client(url, { ...common, ...byRole[role], ...extra });
}
