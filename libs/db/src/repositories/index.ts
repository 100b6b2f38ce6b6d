export * from './catalogue.repository';
export * from './unique-violation';
