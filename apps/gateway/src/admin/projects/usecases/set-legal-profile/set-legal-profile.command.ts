import { z } from 'zod';

export const LEGAL_PROFILE_STATUSES = ['verified', 'pending', 'missing'] as const;

export const SetLegalProfileBody = z.strictObject({ status: z.enum(LEGAL_PROFILE_STATUSES) }).meta({ id: 'SetLegalProfileBody' });

export type SetLegalProfileCommand = z.infer<typeof SetLegalProfileBody> & { projectUid: string };
