'use strict';
// What has arrived of a seed, read through the product API (ADR 0241): people merged (the
// exact audience count) and events stored (the exact per-type counts of the event-volumes
// probe). Busy answers are retried (http.js); any other failure stops the seed with its reason,
// so a refused read is never mistaken for data that did not arrive.
const { expectOk } = require('../cli/commands/admin');
const { postJson } = require('./http');

/** Every contact: an empty `and` group matches all, and a probe with a root is computed live, never cached. */
const EVERYONE = { type: 'group', operator: 'and', children: [] };
/** The longest look-back (plan xl); the seed's events are at most 90 days old. */
const WINDOW_DAYS = 365;

const LABEL = 'meld seed';

/**
 * A read-only product token for the seed's project, minted per run (not kept in the state file)
 * and revoked by `close()`. A run killed before it closed left its token behind: those of this
 * project are revoked first, so a token the seed minted never outlives the next run.
 */
async function arrivals(client, { organizationId, projectUid }) {
  const listed = await expectOk(client, 'GET', `organizations/${organizationId}/tokens`);
  const leftovers = listed.entity.filter((t) => t.label === LABEL && t.revokedAt === null && t.projects.length === 1 && t.projects[0] === projectUid);
  for (const t of leftovers) await expectOk(client, 'DELETE', `tokens/${t.id}`);
  const minted = await expectOk(client, 'POST', `organizations/${organizationId}/tokens`, { scopes: ['PROJECT_AUDIENCE_READ'], projects: [projectUid], label: LABEL });
  const token = minted.metadata.token;
  const api = `${client.base}/v1/project/${projectUid}`;
  const read = async (path, body, pick) => {
    const { status, json } = await postJson(`${api}/${path}`, token, body);
    if (status !== 200) throw new Error(`meld seed: POST /v1/project/${projectUid}/${path} answered ${status}: ${json.message ?? 'no message'}`);
    return pick(json.metadata);
  };
  return {
    people: () => read('audience/count', {}, (m) => m.totalHits),
    events: () => read('event/volumes', { root: EVERYONE, window: WINDOW_DAYS }, (m) => m.eventTypes.reduce((sum, t) => sum + t.count, 0)),
    close: () => expectOk(client, 'DELETE', `tokens/${minted.entity.id}`),
  };
}

module.exports = { arrivals };
