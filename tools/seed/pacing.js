'use strict';
// Backpressure of `meld seed` (ADR 0241): the seed may run at most `maxAhead` items ahead of
// what the product API says has arrived (people merged, events stored), because the
// development broker drops the oldest messages of a partition past 5 MB (ADR 0092) and a
// backlog larger than that window loses data without an error anywhere.

/**
 * What to do before sending items up to `end`, knowing `confirmed` from a read `readAgeMs` ago:
 * 'send' when within `maxAhead`; otherwise 'read' the count again when the last read is at
 * least `readEveryMs` old, else 'wait'. A stale `confirmed` only errs on the side of waiting,
 * since the counts never go down while a seed runs.
 */
function paceStep({ end, confirmed, maxAhead, readAgeMs, readEveryMs }) {
  if (end - confirmed <= maxAhead) return 'send';
  return readAgeMs >= readEveryMs ? 'read' : 'wait';
}

/**
 * Keeps sends within `maxAhead` of `read()` (an exact count; a read that throws ends the wait
 * with its error); `onWait(ahead)` reports each wait, `onWait(0)` its end. One read at a time,
 * shared by every worker. A wait during which the count does not move for `stallMs` throws
 * `stalled(ahead)`'s error: what is missing will not arrive (dropped, or the stack is down).
 */
function pacer({ read, maxAhead, readEveryMs, stallMs, stalled, sleepMs = 250, now = Date.now }) {
  let confirmed = 0;
  let readAt = -Infinity;
  let movedAt = -Infinity;
  let reading;
  const refresh = () => {
    reading ??= Promise.resolve(read())
      .then((n) => {
        if (!Number.isInteger(n) || n <= confirmed) return;
        confirmed = n;
        movedAt = now();
      })
      .finally(() => {
        readAt = now();
        reading = undefined;
      });
    return reading;
  };
  return {
    get confirmed() {
      return confirmed;
    },
    async before(end, onWait = () => undefined) {
      let waitedSince;
      for (;;) {
        const step = paceStep({ end, confirmed, maxAhead, readAgeMs: now() - readAt, readEveryMs });
        if (step === 'send') break;
        waitedSince ??= now();
        if (now() - Math.max(movedAt, waitedSince) >= stallMs) throw stalled(end - confirmed, confirmed);
        onWait(end - confirmed);
        if (step === 'read') await refresh();
        else await new Promise((r) => setTimeout(r, sleepMs));
      }
      if (waitedSince !== undefined) onWait(0);
    },
  };
}

/**
 * Waits until `read()` reaches `expected`, giving up after `stallMs` without progress (a count
 * that stops moving is data that will not arrive); `onRead(n)` shows each reading. Resolves
 * to the last count read.
 */
async function settle({ read, expected, stallMs, everyMs = 1000, onRead = () => undefined, now = Date.now }) {
  let best = -1;
  let movedAt = now();
  for (;;) {
    const n = await read();
    if (Number.isInteger(n) && n > best) {
      best = n;
      movedAt = now();
      onRead(n);
    }
    if (best >= expected || now() - movedAt >= stallMs) return Math.max(best, 0);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

module.exports = { paceStep, pacer, settle };
