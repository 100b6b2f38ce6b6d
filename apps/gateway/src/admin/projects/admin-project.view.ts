import { DATA_MODES } from '@meld/contracts';
import { type ProjectEntity } from '@meld/db';
import { ProjectSchema, envelope, toProjectResource, uniqueAttributesOf } from '@meld/api';
import { z } from 'zod';

/** What the operator sees beside the Project: the settings the product read does not show. */
export const AdminProjectMetadataSchema = z
  .object({
    organizationId: z.string(),
    mergingAttributes: z.array(z.string()).describe('beyond `_user_id`'),
    uniqueAttributes: z.array(z.string()).describe('`_user_id` then the merging attributes, as the product read reports them'),
    dataMode: z.enum(DATA_MODES).nullable().describe("the project's override; null follows the organization"),
    legalProfileStatus: z.enum(['verified', 'pending', 'missing']),
  })
  .meta({ id: 'AdminProjectMetadata' });

export const AdminProjectSchema = envelope(ProjectSchema, AdminProjectMetadataSchema);

export function adminProjectView(p: ProjectEntity): z.infer<typeof AdminProjectSchema> {
  return {
    entity: toProjectResource(p),
    metadata: {
      organizationId: p.organizationId,
      mergingAttributes: p.mergingAttributes,
      uniqueAttributes: uniqueAttributesOf(p),
      dataMode: p.dataMode,
      legalProfileStatus: p.legalProfileStatus,
    },
  };
}
