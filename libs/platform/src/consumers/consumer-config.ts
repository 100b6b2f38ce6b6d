import type { ConsumerRunnerOptions } from '@meld/kafka';
import type { Logger } from '@nestjs/common';
import { metricsRegistry } from '../metrics/metrics';
import type { KafkaClient } from '../stores/kafka-client';
import { kafkaLoggerOf } from './kafka-logger';

/** Settings of one consumer group. */
export interface GroupOptions {
  groupId: string;
  /** Where a new group starts (true: a new deployment processes what is already there). */
  fromBeginning: boolean;
  /**
   * How long the group waits for a member that stopped heartbeating (a killed process)
   * before giving its partitions to others. Default 30 s (kafkajs); the crash tests use 6 s.
   */
  sessionTimeoutMs?: number;
}

/** `MELD_KAFKA_SESSION_TIMEOUT_MS` when set (a positive integer), else the library default. */
export function sessionTimeoutFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const n = Number(env.MELD_KAFKA_SESSION_TIMEOUT_MS);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/** What every libs/kafka runner of an app shares: the app's client, metrics registry and logger. */
export type HostedRunnerOptions = Omit<ConsumerRunnerOptions, 'handlers'>;

export function hostedRunnerOptions(o: GroupOptions & { client: KafkaClient; clientId: string; logger: Logger }): HostedRunnerOptions {
  return {
    kafka: o.client.kafka,
    brokers: o.client.brokers,
    clientId: o.clientId,
    groupId: o.groupId,
    fromBeginning: o.fromBeginning,
    metrics: metricsRegistry,
    sessionTimeoutMs: o.sessionTimeoutMs,
    // Heartbeats well within the session, or a short session times out healthy members.
    heartbeatIntervalMs: o.sessionTimeoutMs ? Math.min(3000, Math.floor(o.sessionTimeoutMs / 3)) : undefined,
    logger: kafkaLoggerOf(o.logger),
  };
}
