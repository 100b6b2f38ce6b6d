import { type ProjectEntity } from '@meld/db';
import { canonicalTimeZone, completeAttributionConfig, completeGeneralConfig, deepMerge } from '@meld/api';
import type { z } from 'zod';
import type { projectFields } from './project-fields';

type Fields = { [K in keyof typeof projectFields]?: z.infer<(typeof projectFields)[K]> };

/**
 * Turns validated Project fields into column values: configs deep-merged over what the
 * project has now (over the defaults for a new one), timestamps parsed, the time zone stored
 * as its tzdata name (`europe/paris` → `Europe/Paris`, `Asia/Kolkata` as given:
 * `canonicalTimeZone`, for create and PATCH alike; not a zod `.transform`, so `projectFields`
 * stay plain schemas for OpenAPI and for reuse). Merging attributes and the default sender are
 * checked by the use case, which has the catalogue.
 */
export function projectColumns(fields: Fields, current?: Pick<ProjectEntity, 'generalConfig' | 'attributionConfig'>): Partial<ProjectEntity> {
  const { generalConfig, attributionConfig, lockedUntil, timezone, mergingAttributes: _checkedElsewhere, ...plain } = fields;
  return {
    ...plain,
    ...(timezone !== undefined ? { timezone: canonicalTimeZone(timezone) ?? timezone } : {}),
    ...(lockedUntil !== undefined ? { lockedUntil: lockedUntil === null ? null : new Date(lockedUntil) } : {}),
    ...(generalConfig !== undefined || !current ? { generalConfig: deepMerge(completeGeneralConfig(current?.generalConfig), generalConfig ?? {}) } : {}),
    ...(attributionConfig !== undefined || !current
      ? { attributionConfig: deepMerge(completeAttributionConfig(current?.attributionConfig), attributionConfig ?? {}) }
      : {}),
  } as Partial<ProjectEntity>;
}
