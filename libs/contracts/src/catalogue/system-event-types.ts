import type { AttributeType } from './reserved-attributes';

export interface SystemEventParameter {
  parameter: string;
  title: string;
  dataType: AttributeType;
}

export interface SystemEventType {
  uid: string;
  name: string;
  parameters: readonly SystemEventParameter[];
}

/** What every SMS status event carries (`error` only on the statuses that have one). */
const SMS_PARAMETERS: readonly SystemEventParameter[] = [
  { parameter: 'smsId', title: 'SMS id', dataType: 'string' },
  { parameter: 'senderId', title: 'Sender id', dataType: 'string' },
  { parameter: 'messagesCount', title: 'Parts', dataType: 'number' },
  { parameter: 'error', title: 'Error', dataType: 'string' },
];

/**
 * Event types Meld itself writes onto contacts' timelines (ADR 0157). Their uids start with
 * `_`, which no declared event type may (the admin API's key rule), so they can never collide
 * with a project's own types nor be ingested by a data source. They are part of every
 * project's filter catalogue without a row (counts, segments and the coverage probe's
 * filters accept them), listed, flagged `system`, by the product API's specs and probed by the
 * event-volumes `event` (ADR 0336); the ingest stream's specs do not show them.
 */
export const SYSTEM_EVENT_TYPES: readonly SystemEventType[] = [
  { uid: '_sms_sent', name: 'SMS sent', parameters: SMS_PARAMETERS },
  { uid: '_sms_delivered', name: 'SMS delivered', parameters: SMS_PARAMETERS },
  { uid: '_sms_undelivered', name: 'SMS undelivered', parameters: SMS_PARAMETERS },
  { uid: '_sms_expired', name: 'SMS expired', parameters: SMS_PARAMETERS },
  { uid: '_sms_failed', name: 'SMS failed', parameters: SMS_PARAMETERS },
  { uid: '_sms_rejected', name: 'SMS rejected', parameters: SMS_PARAMETERS },
  // The recipient's own actions on an SMS's links (ADR 0182).
  {
    uid: '_sms_click',
    name: 'SMS link clicked',
    parameters: [
      { parameter: 'smsId', title: 'SMS id', dataType: 'string' },
      { parameter: 'url', title: 'URL', dataType: 'string' },
    ],
  },
  { uid: '_sms_unsubscribe', name: 'SMS unsubscribe', parameters: [{ parameter: 'smsId', title: 'SMS id', dataType: 'string' }] },
  // The contact's number suppressed and lifted (ADR 0361): `reason` `invalid_destination` or `manual`; `detail` the SMSC's command_status.
  {
    uid: '_sms_suppressed',
    name: 'SMS number suppressed',
    parameters: [
      { parameter: 'reason', title: 'Reason', dataType: 'string' },
      { parameter: 'detail', title: 'Detail', dataType: 'string' },
    ],
  },
  { uid: '_sms_unsuppressed', name: 'SMS number suppression lifted', parameters: [{ parameter: 'reason', title: 'Reason', dataType: 'string' }] },
];

/** The timeline event of an SMS status; `enqueued` has none (the request itself is the caller's record). */
export function smsStatusEventType(status: string): string | null {
  return status === 'enqueued' ? null : `_sms_${status}`;
}
