import { APPS } from '@meld/contracts';
import { DATA_SOURCE } from '@meld/db';
import type { MeldAppDefinition } from '@meld/platform';
import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { audienceOutboxRelay } from './merge/audience-outbox.relay';
import { CONTACTS_CONSUMER_OPTIONS, ContactsConsumer, contactsConsumerOptions } from './merge/contacts.consumer';
import { MergeRepository } from './merge/merge.repository';
import { MergeContacts } from './merge/usecases/merge-contacts/merge-contacts.usecase';
import { RemergeRepository } from './remerge/remerge.repository';
import { RemergeWorker, remergePollMs } from './remerge/remerge.worker';
import { RemergeProject } from './remerge/usecases/remerge-project/remerge-project.usecase';
import { AutomationTriggersConsumer, TRIGGERS_CONSUMER_OPTIONS, triggersConsumerOptions } from './triggers/automation-triggers.consumer';
import { TriggerMembershipRepository } from './triggers/trigger-membership.repository';

const capLogger = new Logger('MergeCap');
/** The data source of a `<dataSourceId>/<userId>` reference. */
const dataSourceOf = (ref: string) => ref.slice(0, Math.max(0, ref.indexOf('/')));

export const appDefinition: MeldAppDefinition = {
  name: 'identity-merge',
  port: APPS['identity-merge'].port,
  stores: APPS['identity-merge'].stores,
  providers: [
    { provide: MergeRepository, inject: [DATA_SOURCE], useFactory: (ds: DataSource) => new MergeRepository(ds) },
    {
      provide: MergeContacts,
      inject: [MergeRepository],
      useFactory: (repository: MergeRepository) =>
        // The source contacts by data source only: their user ids are phones and emails (ADR 0338).
        new MergeContacts(repository, { onCap: (projectId, e) => capLogger.warn(`project ${projectId}: a contact of data source ${dataSourceOf(e.contact)} not merged into the audience contact of one of data source ${dataSourceOf(e.into)}: ${e.reason}`) }),
    },
    { provide: CONTACTS_CONSUMER_OPTIONS, useFactory: () => contactsConsumerOptions() },
    { provide: TRIGGERS_CONSUMER_OPTIONS, useFactory: () => triggersConsumerOptions() },
    { provide: RemergeRepository, inject: [DATA_SOURCE], useFactory: (ds: DataSource) => new RemergeRepository(ds) },
    { provide: RemergeProject, inject: [RemergeRepository, MergeContacts], useFactory: (r: RemergeRepository, m: MergeContacts) => new RemergeProject(r, m) },
    { provide: RemergeWorker, inject: [RemergeRepository, RemergeProject], useFactory: (r: RemergeRepository, p: RemergeProject) => new RemergeWorker(r, p, remergePollMs()) },
    audienceOutboxRelay,
    ContactsConsumer,
    TriggerMembershipRepository,
    AutomationTriggersConsumer,
  ],
};
