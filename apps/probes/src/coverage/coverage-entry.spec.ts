import { samplingPlan } from '@meld/clickhouse';
import { AVG_WITHHELD, EXTREMES_OMITTED, EXTREMES_WITHHELD, coverageEntry, type AttributeFigures, type Measure } from './coverage-entry';
import type { ProfiledAttribute } from './profiled-attributes';
import { TOP_VALUES_OMITTED } from './top-values-policy';

const attribute = (uid: string, type: ProfiledAttribute['type']) => ({ uid, label: uid, type, multivalue: false, named: false, identity: false }) as unknown as ProfiledAttribute;
const measure = (piiAccess: Measure['piiAccess'], size = 10): Measure => ({ plan: samplingPlan(size), population: size, scanned: size, piiAccess });

describe('coverageEntry', () => {
  // What the reads give for contact u42 alone (a root matching one contact).
  const one: AttributeFigures = { observedFilled: 1, distinct: 1, avg: 37, min: 37, max: 37, top: [{ value: '37', contacts: 1 }] };

  it('shows no value, avg, min or max where the view is withheld; presence and distinct counts stay (ADR 0164)', () => {
    const number = coverageEntry(attribute('age', 'number'), one, measure('withheld', 1));
    expect(number).toMatchObject({ fillRate: 1, filled: 1, distinctValues: 1, topValuesOmitted: TOP_VALUES_OMITTED.dataMode });
    expect(number.stats).toEqual({ avg: null, avgOmitted: AVG_WITHHELD, extremesOmitted: EXTREMES_WITHHELD });
    expect(JSON.stringify(number)).not.toContain('37');
    const text = coverageEntry(attribute('first_name', 'string'), { ...one, top: [{ value: 'Ada', contacts: 1 }] }, measure('withheld', 1));
    expect(text).toMatchObject({ topValuesOmitted: TOP_VALUES_OMITTED.dataMode });
    expect(JSON.stringify(text)).not.toContain('Ada');
  });

  it('gives a number attribute without values a null avg (avgArray over nothing is NaN, read as null or NaN), sampled or not', () => {
    for (const avg of [Number.NaN, 0]) {
      const empty: AttributeFigures = { observedFilled: 0, distinct: 0, avg, min: 0, max: 0, top: [] };
      expect(coverageEntry(attribute('rating', 'number'), empty, measure('clear')).stats).toEqual({ avg: null, min: null, max: null });
      expect(coverageEntry(attribute('rating', 'number'), empty, measure('clear', 30_000)).stats).toEqual({ avg: null, extremesOmitted: EXTREMES_OMITTED });
    }
  });
});
