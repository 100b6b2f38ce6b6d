import { DATA_MODES } from '@meld/contracts';
import { type ProjectEntity } from '@meld/db';
import { ProjectSchema, envelope, isoOrNull, isoWithOffset, timestamp, toProjectResource, uniqueAttributesOf } from '@meld/api';
import { z } from 'zod';

/** What the operator sees beside the Project: the settings the product read does not show. */
export const AdminProjectMetadataSchema = z
  .object({
    organizationId: z.string(),
    mergingAttributes: z.array(z.string()).describe('beyond `_user_id`'),
    uniqueAttributes: z.array(z.string()).describe('`_user_id` then the merging attributes, as the product read reports them'),
    dataMode: z.enum(DATA_MODES).nullable().describe("the project's override; null follows the organization"),
    legalProfileStatus: z.enum(['verified', 'pending', 'missing']),
    remerge: z
      .object({
        status: z.enum(['in-progress', 'done']),
        requestedAt: timestamp().describe('when the merging attributes last changed'),
        contactsDone: z.int().min(0).describe('source contacts merged again so far'),
        doneAt: timestamp().nullable(),
      })
      .nullable()
      .describe('identity-merge merging the contacts again after the last change of merging attributes or of the locale country (ADR 0331); null before any such change'),
  })
  .meta({ id: 'AdminProjectMetadata' });

/** A row of `remerge_requests`, as the repository reads it. */
export interface RemergeState {
  requestedAt: Date;
  contactsDone: number;
  doneAt: Date | null;
}

export const AdminProjectSchema = envelope(ProjectSchema, AdminProjectMetadataSchema);

export function adminProjectView(p: ProjectEntity, remerge: RemergeState | null = null): z.infer<typeof AdminProjectSchema> {
  return {
    entity: toProjectResource(p),
    metadata: {
      organizationId: p.organizationId,
      mergingAttributes: p.mergingAttributes,
      uniqueAttributes: uniqueAttributesOf(p),
      dataMode: p.dataMode,
      legalProfileStatus: p.legalProfileStatus,
      remerge: remerge && {
        status: remerge.doneAt ? 'done' : 'in-progress',
        requestedAt: isoWithOffset(remerge.requestedAt),
        contactsDone: remerge.contactsDone,
        doneAt: isoOrNull(remerge.doneAt),
      },
    },
  };
}
