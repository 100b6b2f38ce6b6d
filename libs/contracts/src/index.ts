export * from './apps';
export * from './messages';
