import { prunes } from './retention-plan';

describe('retention plan (ADR 0168)', () => {
  it('prunes every event past the plan look-back, and a type past its own shorter retention', () => {
    const now = 1_000 * 86_400;
    expect(
      prunes(
        [
          { projectId: 'a', plan: 'm', eventTypes: [{ uid: 'page_view', retentionDays: 7 }, { uid: 'purchase', retentionDays: 365 }] },
          { projectId: 'b', plan: 's', eventTypes: [] },
        ],
        now,
      ),
    ).toEqual([
      { projectId: 'a', before: now - 90 * 86_400 },
      { projectId: 'a', eventType: 'page_view', before: now - 7 * 86_400 },
      { projectId: 'b', before: now - 30 * 86_400 },
    ]);
  });
});
