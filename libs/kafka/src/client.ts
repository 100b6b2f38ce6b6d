import { Kafka } from 'kafkajs';
import { KAFKAJS_LEVEL, kafkajsLogCreator, silentLogger, type KafkaLogLevel, type Logger } from './logger';

/** How to reach the cluster; shared by the producer, the consumer runner, health and topics. */
export interface KafkaConnectionOptions {
  /** `host:port` list, or the comma-separated form of MELD_KAFKA_BROKERS. */
  brokers: string[] | string;
  clientId: string;
  logger?: Logger;
  /** kafkajs's own log level; `warn` keeps group joins and rebalances out of the logs. */
  kafkaLogLevel?: KafkaLogLevel;
  /** Socket connect timeout; kafkajs's 1 s default is too short for a cold CI box. */
  connectionTimeoutMs?: number;
  /** Retries of a failed request or connection (kafkajs default 5); a health check wants 0. */
  retries?: number;
}

export function parseBrokers(brokers: string[] | string): string[] {
  const list = (Array.isArray(brokers) ? brokers : brokers.split(',')).map((b) => b.trim()).filter(Boolean);
  if (list.length === 0) throw new Error('no Kafka brokers given (MELD_KAFKA_BROKERS is a comma-separated host:port list)');
  return list;
}

export function createKafkaClient(options: KafkaConnectionOptions): Kafka {
  return new Kafka({
    brokers: parseBrokers(options.brokers),
    clientId: options.clientId,
    connectionTimeout: options.connectionTimeoutMs ?? 3000,
    logLevel: KAFKAJS_LEVEL[options.kafkaLogLevel ?? 'warn'],
    logCreator: kafkajsLogCreator(options.logger ?? silentLogger),
    retry: options.retries === undefined ? undefined : { retries: options.retries },
  });
}
