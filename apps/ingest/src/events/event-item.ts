import type { AttributeType } from '@meld/contracts';
import { type AttributeValue, isIsoDateTime, scalarError, storedEmail } from '../contacts/attribute-rules';
import { dict, hasKey } from '@meld/contracts';
import { type ItemErrors, isPlainObject, keyError, userIdError } from '../contacts/contact-item';
import { eventDateRangeError, eventParametersErrors, parametersSizeError } from './event-parameters';
import { userDataSizeError } from './event-user-data';

export interface EventTypeRule {
  id: string;
  uid: string;
  automation: boolean;
  parameters: EventParameterRule[];
}

export interface EventParameterRule {
  parameter: string;
  dataType: AttributeType;
  required: boolean;
  multiValue: number;
  maxLength: number | null;
}

export interface ParsedEvent {
  userId: string;
  eventId: string;
  eventType: EventTypeRule;
  /** ISO, UTC; the reception time when `_event_date` was omitted (inside the automation window). */
  eventDate: string;
  parameters: Record<string, unknown>;
  userData: Record<string, unknown> | null;
}

const EVENT_FIELDS = new Set(['_user_id', '_event_id', '_event_type', '_event_parameters', '_event_date', '_user_data']);
const EVENT_ID_MAX = 256;

/** Why a parameter value does not fit its declaration, or null. */
function parameterError(rule: EventParameterRule, value: unknown): string | null {
  const list = Array.isArray(value) ? value : [value];
  if (Array.isArray(value) && rule.multiValue <= 1) return 'must be a single value, not a list';
  if (list.length > rule.multiValue) return `must have at most ${rule.multiValue} values`;
  for (const v of list) {
    // A declared string is bounded by its maxLength (the catalogue allows up to 65,535) and the 16 KiB
    // of all parameters (ADR 0113), not by the 2,048 characters of a contact attribute (ADR 0036).
    const err = rule.dataType === 'string' ? (typeof v === 'string' ? null : 'must be a string') : scalarError(rule.dataType, v);
    if (err) return err;
    if (rule.maxLength !== null && typeof v === 'string' && v.length > rule.maxLength) return `must be at most ${rule.maxLength} characters`;
  }
  return null;
}

/** `_event_id`: a required non-empty string, the key of its deduplication. */
export function eventIdError(value: unknown): string | null {
  return keyError(value, EVENT_ID_MAX);
}

/**
 * Checks one event item against the project's event types: `_user_id`, `_event_id` and
 * `_event_type` (a declared type) are required, `_event_parameters` is an object whose
 * declared parameters are present when required and of their type (undeclared ones pass:
 * the spec lets types evolve) and every parameter within the bounds of event-parameters.ts,
 * `_event_date` an ISO date-time with an offset that ClickHouse can hold (default: reception time), `_user_data` an object
 * of at most 256 KiB as JSON (event-user-data.ts; its attributes are checked by the contact path). Other top-level
 * names are errors.
 */
export function parseEvent(item: Record<string, unknown>, types: ReadonlyMap<string, EventTypeRule>, receivedAt: string): { ok: true; event: ParsedEvent } | { ok: false; errors: ItemErrors } {
  const errors: ItemErrors = dict();
  // A declared parameter's check and the bound on every parameter may say the same thing (1e400): once.
  const fail = (name: string, message: string) => {
    const messages = (errors[name] ??= []);
    if (!messages.includes(message)) messages.push(message);
  };
  const idErr = userIdError(item._user_id);
  if (idErr) fail('_user_id', idErr);
  const eventId = item._event_id;
  const eventIdErr = eventIdError(eventId);
  if (eventIdErr) fail('_event_id', eventIdErr);
  let eventType: EventTypeRule | undefined;
  if (item._event_type === undefined || item._event_type === null) fail('_event_type', 'is required');
  else if (typeof item._event_type !== 'string') fail('_event_type', 'must be a string');
  else if (!(eventType = types.get(item._event_type))) fail('_event_type', `unknown event type ${item._event_type}`);
  let eventDate = receivedAt;
  if (item._event_date !== undefined && item._event_date !== null) {
    const rangeError = typeof item._event_date === 'string' && isIsoDateTime(item._event_date) ? eventDateRangeError(item._event_date) : 'must be an ISO 8601 date-time with an offset';
    if (rangeError) fail('_event_date', rangeError);
    else eventDate = new Date(item._event_date as string).toISOString();
  }
  const parameters = item._event_parameters ?? {};
  if (!isPlainObject(parameters)) fail('_event_parameters', 'must be an object');
  else for (const [field, message] of eventParametersErrors(parameters)) fail(field, message);
  if (isPlainObject(parameters) && eventType) {
    for (const rule of eventType.parameters) {
      const value = hasKey(parameters, rule.parameter) ? parameters[rule.parameter] : undefined;
      if (value === undefined || value === null) {
        if (rule.required) fail(`_event_parameters.${rule.parameter}`, 'is required');
        continue;
      }
      // An empty list carries no value: a required parameter sent as [] is missing, as the
      // audience's conditions read it (`exists` is false for it).
      if (rule.required && Array.isArray(value) && value.length === 0) {
        fail(`_event_parameters.${rule.parameter}`, 'is required');
        continue;
      }
      const err = parameterError(rule, value);
      if (err) fail(`_event_parameters.${rule.parameter}`, err);
    }
  }
  const userData = item._user_data ?? null;
  if (userData !== null && !isPlainObject(userData)) fail('_user_data', 'must be an object');
  else if (userData && hasKey(userData, '_user_id') && userData._user_id !== item._user_id) fail('_user_data._user_id', 'must be omitted or equal to _user_id');
  else if (userData) {
    const sizeError = userDataSizeError(userData);
    if (sizeError) fail('_user_data', sizeError);
  }
  for (const name of Object.keys(item)) if (!EVENT_FIELDS.has(name)) fail(name, `unknown event field ${name}`);
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const stored = storedParameters(parameters as Record<string, unknown>, eventType!);
  // NFC may lengthen an email (a few characters decompose): the bound holds for what is published.
  const sizeError = stored === parameters ? null : parametersSizeError(stored);
  if (sizeError) return { ok: false, errors: dict({ _event_parameters: [sizeError] }) };
  return {
    ok: true,
    event: {
      userId: item._user_id as string,
      eventId: eventId as string,
      eventType: eventType!,
      eventDate,
      parameters: stored,
      userData: userData as Record<string, unknown> | null,
    },
  };
}

/**
 * The parameters as published: a declared `email` parameter trimmed and in Unicode NFC, as a
 * contact's email is stored (ADR 0036). Its check trims before matching, and the audience's event
 * conditions compare the stored text: ` ada@example.com ` was accepted, then never matched by
 * `equals` ada@example.com. Other values stay as sent; without an email, the same object.
 */
function storedParameters(parameters: Record<string, unknown>, type: EventTypeRule): Record<string, unknown> {
  const emails = type.parameters.filter((rule) => rule.dataType === 'email' && hasKey(parameters, rule.parameter) && parameters[rule.parameter] !== null);
  if (emails.length === 0) return parameters;
  const stored = { ...parameters };
  for (const { parameter } of emails) stored[parameter] = storedEmail(parameters[parameter] as AttributeValue);
  return stored;
}

/** Spec rule 4: automations fire only within ±1 h of reception (future beyond +1 h skips too). */
export const AUTOMATION_WINDOW_MS = 60 * 60 * 1000;

export function insideAutomationWindow(eventDate: string, receivedAt: string): boolean {
  return Math.abs(Date.parse(eventDate) - Date.parse(receivedAt)) <= AUTOMATION_WINDOW_MS;
}
