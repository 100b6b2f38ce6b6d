import { ALL_SCOPES } from '@meld/contracts';
import { OrganizationSummarySchema, ProjectSchema, envelope } from '@meld/api';
import { z } from 'zod';

/** `GET /v1/project/{project}`: entity Project; metadata uniqueAttributes (always), organization, scopes. */
export const ProjectReadSchema = envelope(
  ProjectSchema,
  z.object({
    uniqueAttributes: z.array(z.string()).describe('`_user_id` then the merging attributes: the unique attributes that merge contacts'),
    organization: OrganizationSummarySchema,
    scopes: z.array(z.enum(ALL_SCOPES)).describe('scopes granted to the calling token'),
  }),
).meta({ id: 'ProjectRead' });
export type ProjectRead = z.infer<typeof ProjectReadSchema>;
