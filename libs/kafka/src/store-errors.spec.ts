import { isTransientStoreError } from './store-errors';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isTransientStoreError', () => {
  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a reset socket', withCode('read ECONNRESET', 'ECONNRESET')],
    ['a connect timeout', withCode('connect ETIMEDOUT', 'ETIMEDOUT')],
    ['Postgres shutting down', withCode('terminating connection due to administrator command', '57P01')],
    ['Postgres starting up', withCode('the database system is starting up', '57P03')],
    ['a connection exception', withCode('connection failure', '08006')],
    ['a serialization failure', withCode('could not serialize access', '40001')],
    ['a deadlock', withCode('deadlock detected', '40P01')],
    ['pg losing its socket', new Error('Connection terminated unexpectedly')],
    ['pg-pool wrapping a refused connect', new Error('Connection terminated due to connection timeout', { cause: withCode('x', 'ECONNREFUSED') })],
    ['TypeORM wrapping the driver', Object.assign(new Error('query failed'), { driverError: withCode('x', '57P01') })],
    ['happy eyeballs', new AggregateError([withCode('a', 'ECONNREFUSED'), withCode('b', 'ECONNREFUSED')], '')],
    ['a ClickHouse request timeout', new Error('Timeout error.')],
    ['ClickHouse 18.16 with too many parts', new Error('Code: 252, e.displayText() = DB::Exception: Too many parts (300)')],
    ['a current ClickHouse timeout', withCode('Timeout exceeded: elapsed 5 seconds', '159')],
  ])('%s is transient', (_what, error) => {
    expect(isTransientStoreError(error)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('duplicate key value', '23505')],
    ['a bad value', withCode('invalid byte sequence for encoding "UTF8": 0x00', '22021')],
    ['a ClickHouse type error', new Error('Code: 53, e.displayText() = DB::Exception: Type mismatch')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an error', 'ECONNREFUSED'],
  ])('%s is not', (_what, error) => {
    expect(isTransientStoreError(error)).toBe(false);
  });
});
