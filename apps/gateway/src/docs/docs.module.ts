import { Module } from '@nestjs/common';
import { DocsPageController } from './docs-page.controller';
import { OpenApiController } from './openapi.controller';
import { PublicDocument } from './public-document';

/** The public OpenAPI document (`/v1/openapi.json`) and its Swagger UI page (`/docs`). */
@Module({ controllers: [OpenApiController, DocsPageController], providers: [PublicDocument] })
export class DocsModule {}
