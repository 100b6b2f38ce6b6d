import { z } from 'zod';
import { projectFields } from '../../project-fields';

export const UpdateProjectBody = z.strictObject(projectFields).partial().meta({ id: 'UpdateProjectBody' });

export type UpdateProjectCommand = z.infer<typeof UpdateProjectBody> & { projectUid: string };
