'use strict';
// What has arrived of a seed, read through the product API (ADR 0241): people merged (the
// exact audience count) and events stored (the exact per-type counts of the event-volumes
// probe). A read that fails resolves to undefined: the seed then just waits longer.
const { expectOk } = require('../cli/commands/admin');
const { postJson } = require('./http');

/** Every contact: an empty `and` group matches all, and a probe with a root is computed live, never cached. */
const EVERYONE = { type: 'group', operator: 'and', children: [] };
/** The longest look-back (plan xl); the seed's events are at most 90 days old. */
const WINDOW_DAYS = 365;

/** A read-only product token for the seed's project, minted per run (not kept in the state file). */
async function arrivals(client, { organizationId, projectUid }) {
  const minted = await expectOk(client, 'POST', `organizations/${organizationId}/tokens`, { scopes: ['PROJECT_AUDIENCE_READ'], projects: [projectUid], label: 'meld seed' });
  const token = minted.metadata.token;
  const api = `${client.base}/v1/project/${projectUid}`;
  const read = async (path, body, pick) => {
    try {
      const { status, json } = await postJson(`${api}/${path}`, token, body);
      return status === 200 ? pick(json.metadata) : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    people: () => read('audience/count', {}, (m) => m.totalHits),
    events: () => read('event/volumes', { root: EVERYONE, window: WINDOW_DAYS }, (m) => m.eventTypes.reduce((sum, t) => sum + t.count, 0)),
  };
}

module.exports = { arrivals };
