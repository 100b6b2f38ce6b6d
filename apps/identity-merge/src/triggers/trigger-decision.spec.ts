import { decideTrigger, type SourceMembership } from './trigger-decision';

const merged = (over: Partial<SourceMembership> = {}): SourceMembership => ({ deleted: false, version: 3n, audienceId: 'a-1', appliedVersion: 3n, sinceWriteMs: 0, ...over });
const unmerged = { audienceId: null, appliedVersion: null };

describe('automation trigger decision', () => {
  it('publishes with the audience id once the merge applied the latest version', () => {
    expect(decideTrigger(merged(), 1000)).toEqual({ kind: 'publish', audienceId: 'a-1', stale: false });
    expect(decideTrigger(merged({ appliedVersion: 4n, sinceWriteMs: 5000 }), 1000)).toEqual({ kind: 'publish', audienceId: 'a-1', stale: false });
  });

  it('waits, within the bound after the latest write, while the contact is not merged or the merge is behind it', () => {
    expect(decideTrigger(merged({ ...unmerged, sinceWriteMs: 999 }), 1000)).toMatchObject({ kind: 'wait', reason: 'the source contact is not merged yet' });
    expect(decideTrigger(merged({ appliedVersion: 2n }), 1000)).toMatchObject({ kind: 'wait', reason: 'the merge applied version 2 of 3' });
  });

  it('after the bound: publishes with the id it has (stale), dead-letters a contact never merged', () => {
    expect(decideTrigger(merged({ appliedVersion: 2n, sinceWriteMs: 1000 }), 1000)).toEqual({ kind: 'publish', audienceId: 'a-1', stale: true });
    expect(decideTrigger(merged({ ...unmerged, sinceWriteMs: 1000 }), 1000)).toEqual({ kind: 'dead-letter', reason: 'the source contact was not merged within 1000 ms of its latest write' });
  });

  it('dead-letters a deleted or unknown contact at once', () => {
    expect(decideTrigger(merged({ deleted: true }), 1000)).toMatchObject({ kind: 'dead-letter', reason: expect.stringMatching(/deleted/) });
    expect(decideTrigger(null, 1000)).toMatchObject({ kind: 'dead-letter' });
  });
});
