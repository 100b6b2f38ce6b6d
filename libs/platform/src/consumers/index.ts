export { BackgroundConsumer, type BackgroundConsumerOptions } from './background-consumer';
export { hostedRunnerOptions, sessionTimeoutFromEnv, type GroupOptions, type HostedRunnerOptions } from './consumer-config';
export { kafkaLoggerOf } from './kafka-logger';
