import { KafkaJSConnectionError, KafkaJSNonRetriableError, KafkaJSProtocolError } from 'kafkajs';
import { UnpublishableMessageError, unpublishableReason } from './unpublishable';

/** A broker's error code as kafkajs raises it. */
const protocol = (type: string, retriable: boolean) => new KafkaJSProtocolError({ type, code: 0, retriable, message: type } as never);
/** kafkajs's retrier gave up on `e` (it keeps it as `cause`). */
const wrapped = (e: Error) => Object.assign(new KafkaJSNonRetriableError(e), { cause: e });

describe('unpublishableReason (ADR 0346)', () => {
  it('names the refusals that are about the records, bare or wrapped by kafkajs', () => {
    expect(unpublishableReason(protocol('MESSAGE_TOO_LARGE', false))).toBe('message_too_large');
    expect(unpublishableReason(wrapped(protocol('MESSAGE_TOO_LARGE', false)))).toBe('message_too_large');
    expect(unpublishableReason(wrapped(protocol('RECORD_LIST_TOO_LARGE', false)))).toBe('record_list_too_large');
    expect(unpublishableReason(protocol('INVALID_RECORD', false))).toBe('invalid_record');
    expect(unpublishableReason(new UnpublishableMessageError('schema', 'message 0 does not match'))).toBe('schema');
    expect(unpublishableReason(Object.assign(new Error('send failed'), { cause: new UnpublishableMessageError('not_json', 'x') }))).toBe('not_json');
  });

  it('is null for what may pass, and for refusals that would refuse every row alike', () => {
    expect(unpublishableReason(new KafkaJSConnectionError('Connection error: ECONNREFUSED'))).toBeNull();
    expect(unpublishableReason(wrapped(protocol('NOT_LEADER_FOR_PARTITION', true)))).toBeNull();
    expect(unpublishableReason(wrapped(protocol('TOPIC_AUTHORIZATION_FAILED', false)))).toBeNull();
    expect(unpublishableReason(wrapped(protocol('UNSUPPORTED_VERSION', false)))).toBeNull();
    expect(unpublishableReason(new Error('MESSAGE_TOO_LARGE in a message is not a type'))).toBeNull();
    expect(unpublishableReason(undefined)).toBeNull();
    expect(unpublishableReason('MESSAGE_TOO_LARGE')).toBeNull();
  });

  it('does not loop on a cycle of causes', () => {
    const a: Error & { cause?: unknown } = new Error('a');
    a.cause = a;
    expect(unpublishableReason(a)).toBeNull();
  });
});
