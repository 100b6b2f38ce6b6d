import { z } from 'zod';

/** Attribute values travel as JSON; `null` in a patch means "clear this attribute". */
export const attributeValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number(), z.boolean()]))]);
export const attributePatch = z.record(z.string().min(1), attributeValue.nullable());
export const isoTimestamp = z.string().datetime({ offset: true });
export const id = z.string().min(1).max(256);

/** Message keys: everything about one contact lands on one partition, in order. */
export const keys = {
  sourceContact: (projectId: string, dataSourceId: string, userId: string) => `${projectId}/${dataSourceId}/${userId}`,
  audienceContact: (projectId: string, audienceId: string) => `${projectId}/${audienceId}`,
  sms: (projectId: string, smsId: string) => `${projectId}/${smsId}`,
};
