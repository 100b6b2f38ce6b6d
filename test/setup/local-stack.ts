// Tests run on the local stack only (libs/testing refuses other databases), where the public
// development secrets are the point: every app a test starts, in-process or as a process
// inheriting this environment, may use them (ADR 0101). A test of the refusal removes it.
process.env.MELD_ALLOW_DEV_SECRETS = '1';
// Tests serve OAuth client metadata documents from loopback over http (ADR 0149).
process.env.MELD_OAUTH_ALLOW_PRIVATE_FETCH = '1';
// Many gateways run at once in a test run (in-process and as processes): each takes a free
// operations port (ADR 0105) instead of its public port + 100.
process.env.MELD_OPS_PORT ??= '0';
// Test webhook receivers listen on loopback (ADR 0156); a test of the refusal sets it to 0.
process.env.MELD_WEBHOOK_ALLOW_PRIVATE ??= '1';
// Suites share ClickHouse and insert deliberately old events: the probes apps they start do not
// prune them on their own schedule (ADR 0168); the retention test calls the pruner's run().
process.env.MELD_PROBES_RETENTION_EVERY_MS ??= '0';
