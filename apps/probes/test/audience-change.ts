import type { AudienceChange } from '@meld/contracts';

/**
 * A meld.audience.v1 snapshot message as identity-merge sends it, for the audience sink's specs
 * (src/sinks/membership-batch.spec.ts, test/sinks.integration-spec.ts): `removed` is its
 * removedDsContactIds, absent when not given.
 */
export const snapshotChange = (projectId: string, audienceId: string, dsContactIds: string[], at: string, removed?: string[]): AudienceChange => ({
  schemaVersion: 1,
  kind: 'snapshot',
  projectId,
  audienceId,
  version: 1,
  at,
  attributes: {},
  dataSources: [],
  dsContactIds,
  ...(removed ? { removedDsContactIds: removed } : {}),
});
