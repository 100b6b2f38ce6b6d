import type { Logger as KafkaLogger } from '@meld/kafka';
import type { Logger } from '@nestjs/common';

/** libs/kafka's structured logger onto a Nest logger (debug dropped: kafkajs chatter). */
export function kafkaLoggerOf(log: Logger): KafkaLogger {
  return {
    debug: () => undefined,
    info: (o, m) => log.log(`${m ?? ''} ${JSON.stringify(o)}`),
    warn: (o, m) => log.warn(`${m ?? ''} ${JSON.stringify(o)}`),
    error: (o, m) => log.error(`${m ?? ''} ${JSON.stringify(o)}`),
  };
}
