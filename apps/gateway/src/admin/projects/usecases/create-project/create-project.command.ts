import { z } from 'zod';
import { UID_PATTERN, UID_RULE } from '../../../shared/slug';
import { projectFields } from '../../project-fields';

export const CreateProjectBody = z
  .strictObject({
    ...z.object(projectFields).partial().shape,
    name: projectFields.name,
    uid: z.string().regex(UID_PATTERN, UID_RULE).optional().describe('project UID used in paths; generated from the name when absent'),
  })
  .meta({ id: 'CreateProjectBody' });

export type CreateProjectCommand = z.infer<typeof CreateProjectBody> & { organizationId: string };
