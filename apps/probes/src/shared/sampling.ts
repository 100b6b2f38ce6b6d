// Audience sampling lives in libs/clickhouse, where the bench can use it too (ADR 0228); importers
// here move to '@meld/clickhouse' once the probes work in flight has landed.
export { MIN_RELIABLE_COUNT, SAMPLED_BUCKETS, SAMPLING_BUCKETS, type SamplingPlan, sampleBound, sampleCondition, sampleQualifier, samplingPlan } from '@meld/clickhouse';
