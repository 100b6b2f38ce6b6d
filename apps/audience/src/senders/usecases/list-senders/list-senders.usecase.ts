import { listQueryOf, pageMetadata } from '@meld/api';
import { Injectable } from '@nestjs/common';
import { SENDER_FIELDS } from '../../sender-fields';
import { toSenderResource } from '@meld/api';
import { SendersRepository } from '../../senders.repository';
import type { ListSendersCommand } from './list-senders.command';

/** The project's SMS senders or RCS agents, with their countries, through the list filter. */
@Injectable()
export class ListSenders {
  constructor(private readonly senders: SendersRepository) {}

  async execute({ projectId, channel, queryString }: ListSendersCommand) {
    const query = listQueryOf(queryString, SENDER_FIELDS);
    const { rows, total } = await this.senders.list(projectId, channel, query);
    const countries = await this.senders.countries(rows.map((r) => r.id));
    return { entity: rows.map((r) => toSenderResource(r, countries.get(r.id) ?? [])), metadata: pageMetadata(query, rows.length, total) };
  }
}
