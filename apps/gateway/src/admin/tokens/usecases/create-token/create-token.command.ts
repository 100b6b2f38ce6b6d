import { ALL_SCOPES } from '@meld/contracts';
import { z } from 'zod';

export const CreateTokenBody = z
  .strictObject({
    scopes: z.array(z.enum(ALL_SCOPES)).min(1).describe('granted scopes; the ingest ones let a product token write to every data source of its projects'),
    projects: z.array(z.string().min(1)).min(1).describe('project UIDs of the organization, or ["*"] for all of them, present and future'),
    label: z.string().trim().min(1).max(200).optional().describe('what the token is for'),
  })
  .meta({ id: 'CreateTokenBody' });

export type CreateTokenCommand = z.infer<typeof CreateTokenBody> & { organizationId: string };
