export * from './catalogue.repository';
export * from './unique-violation';
export * from './filter-catalogue.repository';
export * from './source-contacts';
export * from './contact-write-time';
export * from './sms-suppressions';
