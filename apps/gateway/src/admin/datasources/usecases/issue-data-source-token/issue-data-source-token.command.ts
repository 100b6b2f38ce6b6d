import { z } from 'zod';

export const IssueDataSourceTokenBody = z
  .strictObject({
    label: z.string().trim().min(1).max(200).optional().describe('default "data source <uid>"'),
  })
  .default({})
  .meta({ id: 'IssueDataSourceTokenBody' });

export type IssueDataSourceTokenCommand = z.infer<typeof IssueDataSourceTokenBody> & { projectUid: string; dataSource: string };
