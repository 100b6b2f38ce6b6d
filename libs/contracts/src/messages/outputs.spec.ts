import { allTopicNames, DLQ_SUFFIX, topicKeyDescription } from '../topic-names';
import { Outputs } from './outputs';

/** A value whose id fields are named after themselves, so a key spells its own shape. */
const named = { projectId: 'project', dataSourceId: 'datasource', userId: 'userId', audienceId: 'audienceId', smsId: 'smsId' };

describe('Outputs', () => {
  it('has one output per topic of topics.json', () => {
    const topics = Object.values(Outputs).map((o) => o.topic);
    expect(topics.sort()).toEqual(allTopicNames().filter((t) => !t.endsWith(DLQ_SUFFIX)).sort());
  });

  it.each(Object.entries(Outputs))('%s keys its values as topics.json documents', (_alias, output) => {
    expect((output.key as unknown as (v: typeof named) => string)(named)).toBe(topicKeyDescription(output.topic));
  });
});
