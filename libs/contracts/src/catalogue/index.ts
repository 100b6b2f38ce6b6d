export * from './attribute-slots';
export * from './project-defaults';
export * from './reserved-attributes';
export * from './scopes';
export * from './scope-descriptions';
export * from './system-event-types';
