-- Accepted events (meld.events.v1), written by the probes events sink.
-- ReplacingMergeTree keyed by (project_id, event_id): an event produced twice (ingest crash
-- after the Kafka ack, consumer redelivery) collapses into one row on merge, and reads
-- deduplicate by event_id as well, so a resent _event_id never counts twice.
-- No PARTITION BY: one partition, so duplicates always meet in a merge whatever their dates.
-- user_id is the source contact's _user_id in data_source_id; the audience contact is found
-- at read time through audience_membership, so merges and splits never rewrite events.
-- param_values are the JSON encodings of the values of param_keys.
CREATE TABLE IF NOT EXISTS {database}.events (
  project_id String,
  data_source_id String,
  user_id String,
  event_id String,
  event_type String,
  event_date DateTime,
  received_at DateTime,
  param_keys Array(String),
  param_values Array(String)
) ENGINE = ReplacingMergeTree()
ORDER BY (project_id, event_id);
