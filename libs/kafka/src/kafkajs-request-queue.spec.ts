// kafkajs's per-connection request queue, patched by patches/kafkajs+2.2.4.patch (ADR 0216):
// unpatched, an idle connection re-armed a 1 ms timer for ever (kafkajs#1556), which was most
// of an idle app's CPU. These tests fail when the patch is not applied.
const RequestQueue = require('kafkajs/src/network/requestQueue') as new (o: object) => KafkajsRequestQueue;

interface KafkajsRequestQueue {
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  requestTimeoutIntervalId?: NodeJS.Timeout & { _repeat: number | null };
  scheduleRequestTimeoutCheck(): void;
  checkPendingRequests(): void;
  maybeThrottle(ms: number): void;
  push(request: { entry: { correlationId: number; apiKey: number; apiName: string; apiVersion: number; resolve: () => void; reject: () => void }; expectResponse: boolean; sendRequest: () => void }): void;
  destroy(): void;
}

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

const queues: KafkajsRequestQueue[] = [];

function queue(enforceRequestTimeout = false): KafkajsRequestQueue {
  const q = new RequestQueue({ maxInFlightRequests: null, requestTimeout: 30_000, enforceRequestTimeout, clientId: 'spec', broker: 'spec:9092', logger: silent });
  queues.push(q);
  return q;
}

// Unpatched, the 1 ms loop would keep Jest alive after the failure: break it.
afterEach(() => {
  for (const q of queues.splice(0)) {
    if (q.throttleCheckTimeoutId) clearTimeout(q.throttleCheckTimeoutId);
    q.destroy();
  }
});

describe('kafkajs request queue (patched)', () => {
  it('arms no timer when nothing is pending and nothing is throttled', () => {
    const q = queue();
    q.checkPendingRequests();
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('still sends a request queued behind a client-side throttle once the throttle ends', async () => {
    const q = queue();
    q.maybeThrottle(30);
    const sent = new Promise<void>((resolve) =>
      q.push({
        entry: { correlationId: 1, apiKey: 1, apiName: 'Fetch', apiVersion: 11, resolve: () => undefined, reject: () => undefined },
        expectResponse: false,
        sendRequest: resolve,
      }),
    );
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([sent.then(() => 'sent'), new Promise((r) => (timer = setTimeout(() => r('not sent'), 2000)))]);
    clearTimeout(timer);
    expect(outcome).toBe('sent');
    // Nothing left to do: the queue goes back to sleep.
    await new Promise((r) => setTimeout(r, 20));
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('checks for timed-out requests once a second, not every 100 ms', () => {
    const q = queue(true);
    q.scheduleRequestTimeoutCheck();
    expect(q.requestTimeoutIntervalId?._repeat).toBe(1000);
  });
});
