import { Controller, Get } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { ApiExcludeController } from '@meld/api';
import { PublicDocument } from './public-document';

/** The merged public document. Anonymous: it describes the API, never data. */
@ApiExcludeController()
@Controller()
export class OpenApiController {
  constructor(private readonly document: PublicDocument) {}

  @Get('v1/openapi.json')
  openapi(): Promise<OpenAPIObject> {
    return this.document.get();
  }
}
