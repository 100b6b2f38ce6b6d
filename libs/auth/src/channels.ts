/**
 * Redis pub/sub channels that keep the gateways' caches honest.
 *
 * `meld.tokens.revoked`: the admin API publishes a token id right after setting its
 * `revoked_at`; every gateway evicts that token at once, so the next request gets 401.
 * `meld.tenancy.changed`: optional; any message (e.g. a project id) makes the gateways
 * drop their cached projects, data sources and tokens (data mode or plan changed).
 * A short cache TTL bounds staleness when a message is lost either way.
 */
export const TOKEN_REVOKED_CHANNEL = 'meld.tokens.revoked';
export const TENANCY_CHANGED_CHANNEL = 'meld.tenancy.changed';
