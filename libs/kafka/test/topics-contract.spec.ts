// Checks that contracts' topic names and the kafka lib agree on the dead-letter naming,
// since the lib does not import contracts (it stays transport-only) and spells `.dlq` itself.
import { allTopicNames, dlqTopic, hasDlq, Topics, TOPIC_PARTITIONS, topicAlias } from '@meld/contracts';
import { topicsFile as topicsJson } from './topics-file';
import { defaultDeadLetterTopic } from '../src';

describe('contracts topics', () => {
  it('gives every topic of topics.json a typed alias', () => {
    expect(Topics.contacts).toBe('meld.contacts.v1');
    expect(Topics.automationTriggers).toBe('meld.automation-triggers.v1');
    expect(Object.values(Topics).sort()).toEqual(topicsJson.topics.map((t) => t.name).sort());
    expect(TOPIC_PARTITIONS).toBe(topicsJson.partitions);
  });

  it('lists the dead-letter topics with the topics', () => {
    const names = allTopicNames();
    for (const t of topicsJson.topics) {
      expect(names).toContain(t.name);
      if (t.dlq) expect(names).toContain(`${t.name}.dlq`);
    }
    expect(names).toHaveLength(topicsJson.topics.length + topicsJson.topics.filter((t) => t.dlq).length);
  });

  it('names dead-letter topics the way the kafka lib does by default', () => {
    for (const t of topicsJson.topics.filter((x) => x.dlq)) {
      expect(hasDlq(t.name)).toBe(true);
      expect(dlqTopic(t.name)).toBe(defaultDeadLetterTopic(t.name));
    }
  });

  it('derives aliases from versioned names and refuses other shapes', () => {
    expect(topicAlias('meld.sms-status.v1')).toBe('smsStatus');
    expect(() => topicAlias('contacts')).toThrow(/meld\.<name>\.v<version>/);
  });
});
