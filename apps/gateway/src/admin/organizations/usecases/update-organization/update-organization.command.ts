import { z } from 'zod';
import { organizationFields } from '../../organization-fields';

export const UpdateOrganizationBody = z.strictObject(organizationFields).partial().meta({ id: 'UpdateOrganizationBody' });

export type UpdateOrganizationCommand = z.infer<typeof UpdateOrganizationBody> & { organizationId: string };
