'use strict';
// The seed's message when what it wrote did not all arrive (ADR 0241): what is missing, and
// why that happens on the development broker, so a short seed never reads as a success.

const WHAT = {
  people: { done: 'merged into the audience', topic: 'meld.contacts.v1', by: 'identity-merge merges them' },
  events: { done: 'stored in the event store', topic: 'meld.events.v1', by: 'the probes sink stores them' },
};

/** `kind` is 'people' or 'events'; `reached` of `expected` arrived and nothing moved for `stallSeconds`. */
function shortfall(kind, reached, expected, stallSeconds) {
  const w = WHAT[kind];
  const n = (x) => x.toLocaleString('en');
  return [
    `meld seed: only ${n(reached)} of ${n(expected)} ${kind} are ${w.done} (${n(expected - reached)} missing), and the count did not move for ${stallSeconds} s.`,
    `  On the development broker (librdkafka's mock cluster) each partition of ${w.topic} keeps only 5 MB and silently drops`,
    `  older messages (ADR 0092): ${kind} written faster than ${w.by} can be dropped before they are consumed.`,
    '  Seed again with --new and a smaller --max-ahead; on a real Kafka, check the consumer lag and the',
    `  dead letters (meld dlq list ${w.topic}).`,
  ].join('\n');
}

/** The same, for a wait cut short in the middle of a phase: `ahead` written beyond the `reached` that arrived. */
function stalledError(kind, stallSeconds) {
  return (ahead, reached) => new Error(shortfall(kind, reached, reached + ahead, stallSeconds));
}

module.exports = { shortfall, stalledError };
