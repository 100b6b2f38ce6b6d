import { NO_PLAN_GATES, parsePlanGates, scopesOnPlan } from './plan-gates';

describe('plan-gated scopes (ADR 0328)', () => {
  const granted = ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_LIST', 'PROJECT_AUDIENCE_DATA_BASIC', 'PROJECT_AUDIENCE_DATA_EVENTS'] as const;

  it('gates nothing by default', () => {
    expect(parsePlanGates(undefined)).toEqual(NO_PLAN_GATES);
    expect(parsePlanGates(' ')).toEqual(NO_PLAN_GATES);
    expect(scopesOnPlan([...granted], 's', NO_PLAN_GATES)).toEqual([...granted]);
  });

  it('drops a gated scope below its smallest plan, keeps it from that plan up', () => {
    const gates = parsePlanGates('PROJECT_AUDIENCE_LIST=m, PROJECT_AUDIENCE_DATA_EVENTS=xl');
    expect(scopesOnPlan([...granted], 's', gates)).toEqual(['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC']);
    expect(scopesOnPlan([...granted], 'm', gates)).toEqual(['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_LIST', 'PROJECT_AUDIENCE_DATA_BASIC']);
    expect(scopesOnPlan([...granted], 'xl', gates)).toEqual([...granted]);
  });

  it('refuses a wrong entry, naming it', () => {
    expect(() => parsePlanGates('PROJECT_AUDIENCE_READ=m')).toThrow('PROJECT_AUDIENCE_READ is not a plan-gated scope');
    expect(() => parsePlanGates('PROJECT_AUDIENCE_LIST=xxl')).toThrow('PROJECT_AUDIENCE_LIST=xxl: the plan is one of s, m, l, xl');
    expect(() => parsePlanGates('PROJECT_AUDIENCE_LIST')).toThrow('"PROJECT_AUDIENCE_LIST" is not SCOPE=plan');
    expect(() => parsePlanGates('constructor=m')).toThrow('constructor is not a plan-gated scope');
  });
});
