import { APPS, INGEST_BODY_LIMIT } from '@meld/contracts';
import { CatalogueRepository } from '@meld/db';
import type { MeldAppDefinition } from '@meld/platform';
import { ContactPatches } from './contacts/contact-patches';
import { ContactsController } from './contacts/contacts.controller';
import { SourceContactsRepository } from './contacts/source-contacts.repository';
import { DeleteContact } from './contacts/usecases/delete-contact/delete-contact.usecase';
import { WriteContacts } from './contacts/usecases/write-contacts/write-contacts.usecase';
import { EventsController } from './events/events.controller';
import { EventDedupPolicy } from './events/dedup/event-dedup.policy';
import { EventsRepository } from './events/events.repository';
import { WriteEvents } from './events/usecases/write-events/write-events.usecase';
import { IngestProducer } from './outbox/ingest-producer';
import { outboxRelay } from './outbox/outbox-relay';
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
  // Bulk senders compress their batches (Segment's and RudderStack's HTTP APIs take gzip): the
  // gateway forwards the compressed bytes within this limit, ingest inflates at most as many (ADR 0012).
  bodyLimit: INGEST_BODY_LIMIT,
  decodeBodies: true,
  controllers: [StreamController, ContactsController, EventsController],
  providers: [
    StreamRepository, StreamScope, CatalogueRepository, DescribeStream, ListStreamAttributes, ListStreamEventTypes, ListStreamEventParameters,
    SourceContactsRepository, ContactPatches, WriteContacts, DeleteContact, IngestProducer, outboxRelay,
    EventsRepository, EventDedupPolicy, WriteEvents,
  ],
};
