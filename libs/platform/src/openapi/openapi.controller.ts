import { InternalPublic } from '@meld/auth';
import { ApiExcludeController, scanAppDocument } from '@meld/api';
import { Controller, Get, Inject } from '@nestjs/common';
import { HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';

export const APP_NAME = Symbol('APP_NAME');

/** This app's routes as OpenAPI, for the gateway to merge into `/v1/openapi.json`. Internal, so no principal. */
@ApiExcludeController()
@InternalPublic()
@Controller()
export class OpenApiController {
  private document?: OpenAPIObject;

  constructor(
    private readonly modules: ModulesContainer,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(APP_NAME) private readonly app: string,
  ) {}

  @Get('openapi.json')
  openapi(): OpenAPIObject {
    return (this.document ??= scanAppDocument(this.modules, this.adapterHost, `Meld ${this.app}`));
  }
}
