/**
 * The planner settings of the direct SMS path's write transactions (ADR 0322): their write
 * statements are prepared once per connection and run on a generic plan, which must not
 * depend on how big the tables were when it was made (ADR 0275: a plan made while
 * `sms_messages` held a few pages kept its sequential scan when it held thousands of rows). With
 * sequential scans, hash and merge joins priced out, every plan joins the batch's rows to the
 * tables through their indexes, at any size; a table with no usable index is still scanned.
 */
export const INDEX_PLANS = { enable_seqscan: 'off', enable_hashjoin: 'off', enable_mergejoin: 'off' } as const;
