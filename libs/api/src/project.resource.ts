import { z } from 'zod';
import type { ProjectEntity } from '@meld/db';
import { timestamp } from './envelope';
import { AttributionConfigSchema, GeneralConfigSchema, completeAttributionConfig, completeGeneralConfig } from './project-config';
import { isoOrNull, isoWithOffset } from './time';

/** `entity` of the project read: every field of the spec's Project table, in its order. */
export const ProjectSchema = z
  .object({
    id: z.string().describe('internal id'),
    uid: z.string().describe('project UID used in paths'),
    name: z.string(),
    description: z.string().nullable(),
    projectType: z.string().describe('for example `standard`'),
    projectStatus: z.string().describe('for example `active`'),
    locale: z.string().describe('language_COUNTRY, e.g. `en_US`'),
    timezone: z.string().describe('IANA zone name'),
    defaultSmsSender: z.string().nullable().describe('id of the default SMS sender; null until one is chosen'),
    shortTrackingDomain: z.string().nullable(),
    unsubscribeTrackingDomain: z.string().nullable(),
    businessType: z.string().nullable(),
    businessContactsSize: z.int(),
    businessUrl: z.string(),
    lockedUntil: timestamp().nullable(),
    lockedReason: z.string().nullable(),
    testSmsNumbers: z.array(z.string()),
    conversionConfig: z.record(z.string(), z.unknown()).nullable(),
    attributionConfig: AttributionConfigSchema,
    generalConfig: GeneralConfigSchema,
    brand: z.record(z.string(), z.unknown()).nullable(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .meta({ id: 'Project' });
export type ProjectResource = z.infer<typeof ProjectSchema>;

export function toProjectResource(p: ProjectEntity): ProjectResource {
  return {
    id: p.id,
    uid: p.uid,
    name: p.name,
    description: p.description,
    projectType: p.projectType,
    projectStatus: p.projectStatus,
    locale: p.locale,
    timezone: p.timezone,
    defaultSmsSender: p.defaultSmsSender,
    shortTrackingDomain: p.shortTrackingDomain,
    unsubscribeTrackingDomain: p.unsubscribeTrackingDomain,
    businessType: p.businessType,
    businessContactsSize: p.businessContactsSize,
    businessUrl: p.businessUrl,
    lockedUntil: isoOrNull(p.lockedUntil),
    lockedReason: p.lockedReason,
    testSmsNumbers: p.testSmsNumbers ?? [],
    conversionConfig: p.conversionConfig,
    attributionConfig: completeAttributionConfig(p.attributionConfig),
    generalConfig: completeGeneralConfig(p.generalConfig),
    brand: p.brand,
    createdAt: isoWithOffset(p.createdAt),
    updatedAt: isoWithOffset(p.updatedAt),
  };
}

/**
 * `metadata.uniqueAttributes`: the attributes that are unique and merge contacts, i.e.
 * `_user_id` (always, first) then the project's merging attributes in configured order.
 * Unique-capable attributes that do not merge are not listed: they identify nothing here.
 */
export function uniqueAttributesOf(p: Pick<ProjectEntity, 'mergingAttributes'>): string[] {
  return ['_user_id', ...(p.mergingAttributes ?? []).filter((a) => a !== '_user_id')];
}
