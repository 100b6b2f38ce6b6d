// Contracts name each topic's dead-letter topic (`dlqTopic`) and this lib has its own default
// (`defaultDeadLetterTopic`, used when a runner is given no name): the two must agree.
import { dlqTopic, hasDlq, Topics } from '@meld/contracts';
import { defaultDeadLetterTopic } from './dead-letter';

describe('dead-letter topic names', () => {
  it('are named the way contracts name them', () => {
    const withDlq = Object.values(Topics).filter((t) => hasDlq(t));
    expect(withDlq.length).toBeGreaterThan(0);
    for (const t of withDlq) expect(dlqTopic(t)).toBe(defaultDeadLetterTopic(t));
  });
});
