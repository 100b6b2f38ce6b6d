export * from './ast';
export * from './compile';
export * from './errors';
export * from './operators';
export { type ListQueryInput, parseListQuery } from './parse';
export * from './resource';
export { joinList, splitList, RESERVED_PARAMETERS } from './url-form';
export { DATE_FORMS, RELATIVE_PERIODS, type RelativePeriod } from './values';
