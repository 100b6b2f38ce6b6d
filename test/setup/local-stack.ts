// Tests run on the local stack only (libs/testing refuses other databases), where the public
// development secrets are the point: every app a test starts, in-process or as a process
// inheriting this environment, may use them (ADR 0101). A test of the refusal removes it.
process.env.MELD_ALLOW_DEV_SECRETS = '1';
