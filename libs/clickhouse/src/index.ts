// Public API of @meld/clickhouse: the client, the literal escaper and SQL fragments, migrations,
// and the table facts both an app and the bench need (the events row, audience sampling; ADR 0228).
export * from './client';
export * from './escape';
export * from './sql';
export * from './migrations';
export * from './limits';
export * from './event-row';
export * from './sampling';
