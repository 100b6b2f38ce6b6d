const { topicReplication } = require('./commands/topics') as { topicReplication: (env: NodeJS.ProcessEnv, brokers: number) => { replicationFactor: number; minInsyncReplicas?: number } };

/** What `meld topics` creates the topics with (ADR 0356): never the brokers' single copy by default. */
describe('meld topics: replication', () => {
  it.each([
    [1, { replicationFactor: 1, minInsyncReplicas: 1 }], // compose, the local overlay
    [2, { replicationFactor: 2, minInsyncReplicas: 1 }],
    [3, { replicationFactor: 3, minInsyncReplicas: 2 }], // the production overlay's three brokers
    [6, { replicationFactor: 3, minInsyncReplicas: 2 }],
  ])('%i broker(s), nothing set: %j', (brokers, want) => {
    expect(topicReplication({}, brokers)).toEqual(want);
  });

  it('takes the operator’s copies and in-sync minimum', () => {
    expect(topicReplication({ MELD_KAFKA_REPLICATION_FACTOR: '5', MELD_KAFKA_MIN_INSYNC_REPLICAS: '3' }, 5)).toEqual({ replicationFactor: 5, minInsyncReplicas: 3 });
    expect(topicReplication({ MELD_KAFKA_REPLICATION_FACTOR: '2' }, 3)).toEqual({ replicationFactor: 2, minInsyncReplicas: 1 });
    expect(topicReplication({ MELD_KAFKA_REPLICATION_FACTOR: '' }, 3)).toEqual({ replicationFactor: 3, minInsyncReplicas: 2 });
  });

  it('leaves both to the brokers with -1 (their default.replication.factor and min.insync.replicas)', () => {
    expect(topicReplication({ MELD_KAFKA_REPLICATION_FACTOR: '-1' }, 3)).toEqual({ replicationFactor: -1, minInsyncReplicas: undefined });
    expect(topicReplication({ MELD_KAFKA_REPLICATION_FACTOR: '-1', MELD_KAFKA_MIN_INSYNC_REPLICAS: '2' }, 3)).toEqual({ replicationFactor: -1, minInsyncReplicas: 2 });
  });

  it.each([
    [{ MELD_KAFKA_REPLICATION_FACTOR: 'three' }, /^MELD_KAFKA_REPLICATION_FACTOR: must be an integer/],
    [{ MELD_KAFKA_REPLICATION_FACTOR: '1.5' }, /^MELD_KAFKA_REPLICATION_FACTOR: must be an integer/],
    [{ MELD_KAFKA_REPLICATION_FACTOR: '0' }, /^MELD_KAFKA_REPLICATION_FACTOR: must be -1/],
    [{ MELD_KAFKA_REPLICATION_FACTOR: '-2' }, /^MELD_KAFKA_REPLICATION_FACTOR: must be -1/],
    [{ MELD_KAFKA_REPLICATION_FACTOR: '4' }, /^MELD_KAFKA_REPLICATION_FACTOR: 4 copies, but the cluster has 3 broker/],
    [{ MELD_KAFKA_MIN_INSYNC_REPLICAS: '0' }, /^MELD_KAFKA_MIN_INSYNC_REPLICAS: must be at least 1/],
    [{ MELD_KAFKA_MIN_INSYNC_REPLICAS: '4' }, /^MELD_KAFKA_MIN_INSYNC_REPLICAS: 4 is more than the 3 copies/],
    [{ MELD_KAFKA_MIN_INSYNC_REPLICAS: 'constructor' }, /^MELD_KAFKA_MIN_INSYNC_REPLICAS: must be an integer/],
  ])('refuses %j, naming the variable', (env, message) => {
    expect(() => topicReplication(env, 3)).toThrow(message);
  });
});
