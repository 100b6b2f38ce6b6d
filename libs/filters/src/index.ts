// The audience filter (system.md section 4) compiled to ClickHouse SQL, and the list query
// filter (product-api.md "List query filter") compiled to Postgres SQL: two grammars, one lib;
// and the windowed reads of audience and event listings.
export * from './audience';
export * from './events';
export * from './list-query';
