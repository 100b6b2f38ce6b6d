// The audience filter of system.md section 4 (version 0.0.1): parse against the catalogue,
// then compile to ClickHouse SQL over audience_snapshot / events / audience_membership.
export * from './types';
export { AudienceFilterError } from './errors';
export { AUDIENCE_FILTER_LIMITS } from './limits';
export { parseAudienceFilter, parseAudienceFilterVersion } from './parse';
export { audienceCount, audiencePage, checkedSize, audienceSelect, audienceSortedPage, audienceTerms, paramValues, type AudienceCountOptions, type AudienceFilterOptions, type AudiencePageOptions, type AudienceSelectOptions, type AudienceSortedPageOptions, type AudienceSortKey, type AudienceTermsOptions } from './compile';
export { liveSnapshot } from './live-snapshot';
export { HASH_SPACE, MIN_SPAN, windowedAudiencePage, type PagePosition, type WindowedPage, type WindowedPageOptions } from './page-windows';
export { slotOf, slotValues, type AttributeArrays, type AttributeSlot } from './slots';
export { attributeSql, catalogueAttributeSql, valueKindOf, type AttributeSql, type StoredAttribute } from './attribute-sql';
export { piiConditionPath } from './pii-conditions';
export { eventConditionPath } from './event-conditions';
export * from './membership-sql';
