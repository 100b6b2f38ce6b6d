import { STATUS_CODES } from 'node:http';

/** The one error shape of every Meld response (system design §4). */
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  details?: unknown;
}

export function errorBody(statusCode: number, message: string, details?: unknown): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message, ...(details === undefined ? {} : { details }) };
}
