import { z } from 'zod';

/** The one error shape of every Meld response (system design §4); see `errorBody` in @meld/platform. */
export const ErrorSchema = z
  .object({
    statusCode: z.int(),
    error: z.string(),
    message: z.string(),
    details: z.unknown().optional().describe('machine-readable context, e.g. `fields` [{path, message}] on a 400'),
  })
  .meta({ id: 'Error' });
