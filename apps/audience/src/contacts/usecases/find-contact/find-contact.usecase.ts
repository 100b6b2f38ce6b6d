import { mayReadByUserId, maySearchByPii, serializeContact } from '@meld/auth';
import { localeCountry, normaliseEmail, normalisePhone } from '@meld/contracts';
import { BadRequestException, ForbiddenException, Injectable, NotFoundException } from '@nestjs/common';
import type { ContactRead } from '../../contact-read.schema';
import { type ContactLookup, ContactsRepository } from '../../contacts.repository';
import type { FindContactCommand } from './find-contact.command';

/**
 * One audience contact by phone, email or user id, through the data-level serializer.
 * Searching by phone or email needs `maySearchByPii` (normal mode, Basic or Full): a hit
 * would confirm who is a contact, so without it the search is refused (403) before any
 * look-up, whatever exists. So does reading by a user id that is a phone or an email where
 * the data mode would not show it (ADR 0045).
 */
@Injectable()
export class FindContact {
  constructor(private readonly contacts: ContactsRepository) {}

  async execute({ principal, organizationId, projectId, by, value }: FindContactCommand): Promise<ContactRead> {
    if (by !== 'user' && !maySearchByPii(principal)) {
      throw new ForbiddenException('searching by phone or email needs the Basic or Full data level and a project in normal data mode (dataPolicy.mayReadPii)');
    }
    if (by === 'user' && !mayReadByUserId(principal, value)) {
      throw new ForbiddenException(
        "userId: this user id holds a phone number or an email, which this project's data mode (anonymized or blocked) does not show: reading a contact by it would confirm who is a contact, as a search by phone or email would",
      );
    }
    const lookup = await this.lookup(organizationId, projectId, by, value);
    // No contact holds U+0000 (ingest refuses it; Postgres text cannot even compare with it).
    const row = lookup.value.includes('\u0000') ? null : await this.contacts.find(projectId, lookup);
    if (!row) throw new NotFoundException('contact not found');
    // The audience id last: a custom attribute named `id` (a valid custom name) must not replace the id later calls use.
    const contact = { ...row.attributes, id: row.id, _datasources: row.datasources, _ds_contact_ids: row.ds_contact_ids };
    return { entity: serializeContact(contact, principal), metadata: { matches: Number(row.matches) } };
  }

  private async lookup(organizationId: string, projectId: string, by: FindContactCommand['by'], value: string): Promise<ContactLookup> {
    if (by === 'user') return { by, value };
    if (by === 'email') return { by, value: normaliseEmail(value) };
    const locale = await this.contacts.projectLocale(organizationId, projectId);
    if (locale === null) throw new NotFoundException('project not found');
    const phone = normalisePhone(value, localeCountry(locale));
    if (!phone) throw new BadRequestException(`phone "${value}" is not a valid phone number (send it in E.164, "+" as %2B, or in the project country's national format)`);
    return { by, value: phone };
  }
}
