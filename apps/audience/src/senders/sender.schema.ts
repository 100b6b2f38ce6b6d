import { SenderSchema, listEnvelope } from '@meld/api';

export const SenderListSchema = listEnvelope(SenderSchema, 'SenderList');

export interface SenderRow {
  id: string;
  channel: 'sms' | 'rcs';
  alias: string;
  name: string;
  status: string;
  createdAt: Date;
}
export interface SenderCountryRow {
  senderId: string;
  country: string;
  accepted: boolean;
  effectiveStatus: string;
  price: string;
}
