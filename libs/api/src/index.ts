export * from './catalogue.resource';
export * from './data-source.resource';
export * from './envelope';
export * from './error.resource';
export * from './openapi';
export * from './openapi-document';
export * from './openapi-decorators';
export * from './organization.resource';
export * from './project-config';
export * from './project.resource';
export * from './time';
export * from './sender.resource';
export * from './html-page';
export * from './storable-text';
// The listing glue every app's listings share (ADR 0158).
export * from './list-query/list-docs';
export * from './list-query/list-page';
export * from './list-query/list-request';
