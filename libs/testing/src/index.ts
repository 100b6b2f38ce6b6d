export * from './tcp-proxy';
export * from './test-env';
export * from './wait-for';
export * from './prototype-names';
export * from './collapsing-history';
export * from './test-clickhouse';
export * from './openapi-503';
