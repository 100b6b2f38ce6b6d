import { ApiBearerAuth, ApiError, ApiErrors, ApiOperation, ApiSuccess } from '@meld/api';
import { applyDecorators, HttpCode } from '@nestjs/common';
import type { z } from 'zod';

export const ADMIN_SECURITY = 'admin';

/** One admin operation: summary, admin bearer, success schema, and the errors every admin route can give. */
export function AdminOperation(summary: string, status: number, schema: z.ZodType | null, errors: number[] = []) {
  return applyDecorators(
    ApiOperation({ summary }),
    ApiBearerAuth(ADMIN_SECURITY),
    HttpCode(status),
    ApiSuccess(status, schema, summary, { rateLimited: false }),
    ApiError(401, 'missing or wrong admin token'),
    ApiError(403, 'the default admin token (`meld-dev-admin`) used from an address other than loopback'),
    ApiErrors(...errors),
  );
}
