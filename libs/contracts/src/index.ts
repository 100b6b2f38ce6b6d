export * from './apps';
export * from './catalogue';
export * from './messages';
// Not './topics': next to topics.json that name resolves to the JSON under require hooks.
export * from './topic-names';
export * from './routes';
export * from './contact-keys';
export * from './dict';
export * from './consent';
export * from './suppression';
export * from './sms-keywords';
export * from './addresses';
export * from './request-context';
export * from './safe-error';
