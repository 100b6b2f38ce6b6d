export interface DeleteSegmentCommand {
  projectId: string;
  segmentId: string;
}
