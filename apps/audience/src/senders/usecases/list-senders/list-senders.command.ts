export interface ListSendersCommand {
  projectId: string;
  channel: 'sms' | 'rcs';
  /** The request's raw query string: the list filter in either form. */
  queryString: string;
}
