import { DATA_SOURCE, SenderCountryEntity, SenderEntity } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

@Injectable()
export class SendersRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** The sender and its per-country statuses in one transaction. */
  create(projectId: string, values: Partial<SenderEntity>, countries: Partial<SenderCountryEntity>[]) {
    return this.ds.transaction(async (em) => {
      const sender = await em.save(em.create(SenderEntity, { ...values, projectId }));
      const saved = await em.save(countries.map((c) => em.create(SenderCountryEntity, { ...c, senderId: sender.id })));
      return { sender, countries: saved.sort((a, b) => a.country.localeCompare(b.country)) };
    });
  }
}
