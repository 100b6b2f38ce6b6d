// Public API of @meld/clickhouse: the client, the literal escaper and SQL fragments, migrations.
export * from './client';
export * from './escape';
export * from './sql';
export * from './migrations';
export * from './limits';
