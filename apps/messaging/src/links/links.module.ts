import { Module } from '@nestjs/common';
import { contactsOutboxRelay } from '../contacts/contacts-outbox-relay';
import { MessagingContacts } from '../contacts/messaging-contacts';
import { InboundKeywords } from '../inbound/inbound-keywords';
import { LinkEvents } from './link-events';
import { LinksController } from './links.controller';
import { LinksRepository } from './links.repository';

/**
 * What the messaging app records about people (ADRs 0181-0184): short-link clicks, the
 * unsubscribe page, inbound keywords, written through its own data source. The send path
 * (SmsModule) imports it for the links of a text and the contacts it auto-creates.
 */
@Module({
  controllers: [LinksController],
  providers: [contactsOutboxRelay, MessagingContacts, LinksRepository, LinkEvents, InboundKeywords],
  exports: [MessagingContacts, LinksRepository, InboundKeywords],
})
export class LinksModule {}
