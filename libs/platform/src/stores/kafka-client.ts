import { type Admin, Kafka, logLevel } from 'kafkajs';

/**
 * The app's kafkajs client plus a cheap liveness question for readiness: a metadata
 * round trip on an admin connection that is re-opened after any failure.
 */
export class KafkaClient {
  readonly kafka: Kafka;
  private admin?: Admin;

  constructor(readonly brokers: string[], clientId: string) {
    this.kafka = new Kafka({ clientId, brokers, logLevel: logLevel.NOTHING, retry: { retries: 2, initialRetryTime: 100 } });
  }

  async ping(): Promise<void> {
    try {
      this.admin ??= this.kafka.admin();
      await this.admin.connect();
      await this.admin.describeCluster();
    } catch (err) {
      const admin = this.admin;
      this.admin = undefined;
      await admin?.disconnect().catch(() => undefined);
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.admin?.disconnect().catch(() => undefined);
  }
}
