import { ALL_SCOPES, INGEST_SCOPES, PRODUCT_SCOPES } from '@meld/contracts';
import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiTags } from '@meld/api';
import { z } from 'zod';
import { AdminOperation } from '../http/admin-docs';
import { AdminTokenGuard } from '../http/admin-token.guard';

const ScopesSchema = z.object({
  entity: z.array(z.enum(ALL_SCOPES)),
  metadata: z.object({ product: z.array(z.enum(PRODUCT_SCOPES)), ingest: z.array(z.enum(INGEST_SCOPES)) }),
});

/** The scopes a token can carry, so tools (e.g. `meld bootstrap`) never keep a copy that drifts. */
@ApiTags('admin')
@UseGuards(AdminTokenGuard)
@Controller('admin/v1/scopes')
export class ScopesController {
  @Get()
  @AdminOperation('List the known token scopes', 200, ScopesSchema)
  list(): z.infer<typeof ScopesSchema> {
    return { entity: [...ALL_SCOPES], metadata: { product: [...PRODUCT_SCOPES], ingest: [...INGEST_SCOPES] } };
  }
}
