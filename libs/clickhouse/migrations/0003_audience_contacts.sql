-- Audience contact snapshots (meld.audience.v1), written by the probes audience sink, read by
-- POST /audience/count (libs/filters compiles the audience filter against it) and the probes.
-- One logical row per (project_id, audience_id); the highest version is current
-- (ReplacingMergeTree(version); reads use FINAL or argMax, so unmerged parts never matter).
-- A tombstone (contact deleted, or absorbed by a merge) is a row with deleted = 1.
--
-- Attribute values are typed arrays so that filters compare natively. A multivalue attribute
-- puts one entry per value under the same key, so "any value matches" is arrayExists:
--   str_keys / str_values: string, email and phone values, as merged;
--   num_keys / num_values: numbers, booleans (1 / 0), date and datetime (unix seconds, UTC).
-- channels: the channels the contact has a valid address for (sms, rcs and whatsapp for a
-- valid mobile number, email for an email address), used by the compliance filter.
-- Ordered and sampled by a hash of the audience id (the coverage probe samples with SAMPLE BY).
-- The hash is a MATERIALIZED column, not an expression in the key: 18.16 refuses FINAL with
-- SAMPLE on an expression key ("Column 'cityHash64(audience_id)' already exists").
CREATE TABLE IF NOT EXISTS {database}.audience_contacts (
  project_id String,
  audience_id String,
  audience_hash UInt64 MATERIALIZED cityHash64(audience_id),
  version UInt64,
  deleted UInt8,
  str_keys Array(String),
  str_values Array(String),
  num_keys Array(String),
  num_values Array(Float64),
  channels Array(String),
  updated_at DateTime
) ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, audience_hash, audience_id)
SAMPLE BY audience_hash;
