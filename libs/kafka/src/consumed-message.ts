import type { IHeaders } from 'kafkajs';
import { schemaVersionOf } from './codec';
import type { ConsumedMessage, RawMessage } from './batch-processor';

const EMPTY_HEADERS: IHeaders = Object.freeze({}) as IHeaders;

/**
 * A class rather than an object literal: one hidden class for every message (V8 keeps the
 * handler's property reads monomorphic), and the schema version is parsed only if read.
 */
export class Message<T> implements ConsumedMessage<T> {
  private decodedKey: string | null | undefined = undefined;
  private version: number | undefined | null = null;

  constructor(
    readonly topic: string,
    readonly partition: number,
    private readonly raw: RawMessage,
    readonly value: T,
    readonly attempt: number,
  ) {}

  get offset(): string {
    return this.raw.offset;
  }

  get headers(): IHeaders {
    return this.raw.headers ?? EMPTY_HEADERS;
  }

  get timestamp(): string {
    return this.raw.timestamp;
  }

  get key(): string | null {
    if (this.decodedKey === undefined) this.decodedKey = this.raw.key === null ? null : this.raw.key.toString('utf8');
    return this.decodedKey;
  }

  get schemaVersion(): number | undefined {
    if (this.version === null) this.version = schemaVersionOf(this.raw.headers);
    return this.version;
  }

  withAttempt(attempt: number): Message<T> {
    return new Message(this.topic, this.partition, this.raw, this.value, attempt);
  }
}
