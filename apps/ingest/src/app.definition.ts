import { APPS } from '@meld/contracts';
import { CatalogueRepository } from '@meld/db';
import type { MeldAppDefinition } from '@meld/platform';
import { OpenApiController } from './openapi/openapi.controller';
import { StreamScope } from './stream/stream-scope';
import { StreamController } from './stream/stream.controller';
import { StreamRepository } from './stream/stream.repository';
import { DescribeStream } from './stream/usecases/describe-stream/describe-stream.usecase';
import { ListStreamAttributes } from './stream/usecases/list-stream-attributes/list-stream-attributes.usecase';
import { ListStreamEventParameters } from './stream/usecases/list-stream-event-parameters/list-stream-event-parameters.usecase';
import { ListStreamEventTypes } from './stream/usecases/list-stream-event-types/list-stream-event-types.usecase';

export const appDefinition: MeldAppDefinition = {
  name: 'ingest',
  port: APPS['ingest'].port,
  stores: APPS['ingest'].stores,
  controllers: [StreamController, OpenApiController],
  providers: [StreamRepository, StreamScope, CatalogueRepository, DescribeStream, ListStreamAttributes, ListStreamEventTypes, ListStreamEventParameters],
};
