// Public API of @meld/kafka: the producer, the consumer runner (PostHog's ingestion shape),
// topic bootstrap and the readiness check. Everything else in src/ is internal.
export { createKafkaClient, parseBrokers, type KafkaConnectionOptions } from './client';
export { isDevelopmentBroker, inspectCluster, FETCH_WAIT_MS, type ClusterFacts } from './broker-kind';
export { silentLogger, type Logger, type KafkaLogLevel } from './logger';
export { createProducer, DEFAULT_MAX_BATCH_BYTES, type Producer, type ProducerOptions, type OutgoingMessage, type SendOptions } from './producer';
export { UnpublishableMessageError, unpublishableReason, type UnpublishableReason } from './unpublishable';
export { createConsumerRunner, type ConsumerRunner, type ConsumerRunnerOptions } from './consumer-runner';
export { createSinkRunner, sinkHandler, type SinkHandler, type SinkRunnerOptions } from './sink-runner';
export {
  processBatch,
  topicHandler,
  type TopicHandler,
  type MessageHandler,
  type ConsumedMessage,
  type BatchResult,
} from './batch-processor';
export { Outcome, RetriableError, DeadLetterError, type HandlerOutcome } from './outcome';
export { DEFAULT_BACKOFF, backoffDelay, type BackoffOptions } from './backoff';
export { DlqHeaders, SCHEMA_VERSION_HEADER, headerString, type DeadLetterReason } from './headers';
export { defaultDeadLetterTopic } from './dead-letter';
export { ensureTopics, missingTopics, type EnsureTopicsOptions, type EnsureTopicsResult } from './ensure-topics';
export { kafkaHealth, createKafkaHealthCheck, type KafkaHealth, type KafkaHealthCheck, type KafkaHealthOptions } from './health';
export { stopOnSignals } from './shutdown';
export { kafkaMetrics, type KafkaMetrics } from './metrics';
export { listDeadLetters, replayDeadLetters, deadLetterTopicOf, replayGroupOf, type DeadLetterEntry, type ReplayProgress } from './dead-letter-admin';
export { traceHeaders, messageContext, inConsumerSpan, tracingOn } from './trace-context';
