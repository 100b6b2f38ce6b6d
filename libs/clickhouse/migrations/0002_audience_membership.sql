-- Which audience contact each source contact belongs to (from meld.audience.v1), written by the
-- probes audience sink. One logical row per (project_id, data_source_id, user_id); the row with
-- the highest version is current (reads use argMax, so unmerged parts never matter).
-- version = (message time in ms) * 2 + (deleted ? 0 : 1): a later merge step wins, and within
-- one step a source contact listed by a snapshot beats its removal from another audience.
CREATE TABLE IF NOT EXISTS {database}.audience_membership (
  project_id String,
  data_source_id String,
  user_id String,
  audience_id String,
  version UInt64,
  deleted UInt8
) ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, data_source_id, user_id);
