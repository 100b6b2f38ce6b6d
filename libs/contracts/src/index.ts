export * from './apps';
export * from './catalogue';
export * from './messages';
export * from './topics';
export * from './routes';
export * from './contact-keys';
