/** `t` as an ISO 8601 UTC string, as `toISOString` writes it (the form of the snapshots' `at`). */
const iso = (t: string) => `to_char(${t} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The attributes of an `audience_contacts` row (alias `c`) as the product API returns them: the
 * merged values, and the internal `_created_at` / `_updated_at` Meld maintains, from the row's
 * times (identity-merge writes them as the step's time, the one its snapshots carry to the
 * audience filters). Last, so no stored attribute can stand in for them.
 */
export const CONTACT_ATTRIBUTES_SQL = `c.attributes || jsonb_build_object('_created_at', ${iso('c.created_at')}, '_updated_at', ${iso('c.updated_at')})`;
