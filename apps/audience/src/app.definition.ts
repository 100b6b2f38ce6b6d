import { APPS } from '@meld/contracts';
import { CatalogueRepository } from '@meld/db';
import type { MeldAppDefinition } from '@meld/platform';
import { ContactsController } from './contacts/contacts.controller';
import { EventsModule } from './events/events.module';
import { CountModule } from './count/count.module';
import { DataSourcesModule } from './datasources/datasources.module';
import { ListsModule } from './lists/lists.module';
import { EventAggregationsModule } from './event-aggregations/event-aggregations.module';
import { EventListsModule } from './event-lists/event-lists.module';
import { AggregationsModule } from './aggregations/aggregations.module';
import { SendersModule } from './senders/senders.module';
import { SegmentsModule } from './segments/segments.module';
import { ContactsRepository } from './contacts/contacts.repository';
import { FindContact } from './contacts/usecases/find-contact/find-contact.usecase';
import { ProjectController } from './project/project.controller';
import { ProjectRepository } from './project/project.repository';
import { GetProject } from './project/usecases/get-project/get-project.usecase';
import { SpecsController } from './specs/specs.controller';
import { ListAttributes } from './specs/usecases/list-attributes/list-attributes.usecase';
import { ListEventParameters } from './specs/usecases/list-event-parameters/list-event-parameters.usecase';
import { ListEventTypes } from './specs/usecases/list-event-types/list-event-types.usecase';

export const appDefinition: MeldAppDefinition = {
  name: 'audience',
  port: APPS['audience'].port,
  stores: APPS['audience'].stores,
  imports: [EventsModule, DataSourcesModule, SendersModule, SegmentsModule, CountModule, ListsModule, EventListsModule, AggregationsModule, EventAggregationsModule],
  controllers: [ProjectController, SpecsController, ContactsController],
  providers: [ProjectRepository, CatalogueRepository, GetProject, ListEventTypes, ListEventParameters, ListAttributes, ContactsRepository, FindContact],
};
