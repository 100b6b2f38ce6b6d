export interface GetSegmentCommand {
  projectId: string;
  segmentId: string;
}
