export interface ListSegmentsCommand {
  projectId: string;
  /** The request's raw query string: the list filter in either form. */
  queryString: string;
}
