export * from './tcp-proxy';
export * from './test-env';
export * from './wait-for';
export * from './hostile-names';
