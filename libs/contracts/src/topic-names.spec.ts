import topicsJson from './topics.json';
import { allTopicNames, hasDlq, Topics, TOPIC_PARTITIONS, topicAlias } from './topic-names';

describe('contracts topics', () => {
  it('gives every topic of topics.json a typed alias', () => {
    expect(Topics.contacts).toBe('meld.contacts.v1');
    expect(Topics.automationTriggers).toBe('meld.automation-triggers.v1');
    expect(Object.values(Topics).sort()).toEqual(topicsJson.topics.map((t) => t.name).sort());
    expect(TOPIC_PARTITIONS).toBe(topicsJson.partitions);
  });

  it('lists the dead-letter topics with the topics', () => {
    const names = allTopicNames();
    const topics: Array<{ name: string; dlq?: boolean }> = topicsJson.topics;
    for (const t of topics) {
      expect(names).toContain(t.name);
      expect(hasDlq(t.name)).toBe(t.dlq === true);
      if (t.dlq) expect(names).toContain(`${t.name}.dlq`);
    }
    expect(names).toHaveLength(topics.length + topics.filter((t) => t.dlq).length);
  });

  it('derives aliases from versioned names and refuses other shapes', () => {
    expect(topicAlias('meld.sms-status.v1')).toBe('smsStatus');
    expect(() => topicAlias('contacts')).toThrow(/meld\.<name>\.v<version>/);
  });
});
