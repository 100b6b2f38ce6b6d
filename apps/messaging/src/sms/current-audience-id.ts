/**
 * A message's contact as it is now (alias `m` = sms_messages): the survivor of the id it was
 * sent to once identity-merge absorbed that one (ADR 0051: aliases resolve in one hop). The
 * message reads show it, so a merged contact's history holds the messages of every contact merged
 * into it (ADR 0159), and the late consent check obeys that contact (ADR 0153).
 */
export const CURRENT_AUDIENCE_ID = `COALESCE((SELECT al.survivor_id FROM audience_aliases al WHERE al.project_id = m.project_id AND al.absorbed_id = m.audience_id), m.audience_id)`;
