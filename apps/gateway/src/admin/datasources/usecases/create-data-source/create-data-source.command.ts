import { z } from 'zod';
import { UID_PATTERN, UID_RULE } from '../../../shared/slug';

export const CreateDataSourceBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    uid: z.string().regex(UID_PATTERN, UID_RULE).optional().describe('unique in the project; generated from the name when absent'),
    connector: z.string().regex(/^[a-z0-9_-]{1,50}$/, 'must be lowercase letters, digits, _ or -').default('api').describe('default `api`'),
    priority: z.int().min(-1000).max(1000).default(0).describe('higher wins when two non-ingest sources supply the same attribute'),
  })
  .meta({ id: 'CreateDataSourceBody' });

export type CreateDataSourceCommand = z.infer<typeof CreateDataSourceBody> & { projectUid: string };
