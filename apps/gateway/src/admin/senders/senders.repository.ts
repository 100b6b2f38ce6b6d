import { DATA_SOURCE, SenderCountryEntity, SenderEntity, isUuid } from '@meld/db';
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

  /**
   * Changes a sender of the project, its country list replaced when `countries` is given, in
   * one transaction (readers such as readiness see the old sender or the new one, never half).
   * null when the project has no such sender.
   */
  async update(projectId: string, senderId: string, values: Partial<SenderEntity>, countries: Partial<SenderCountryEntity>[] | undefined) {
    if (!isUuid(senderId)) return null;
    return this.ds.transaction(async (em) => {
      const sender = await em.findOne(SenderEntity, { where: { id: senderId, projectId }, lock: { mode: 'pessimistic_write' } });
      if (!sender) return null;
      const saved = await em.save(Object.assign(sender, values));
      if (countries) {
        await em.delete(SenderCountryEntity, { senderId });
        await em.save(countries.map((c) => em.create(SenderCountryEntity, { ...c, senderId })));
      }
      const all = await em.find(SenderCountryEntity, { where: { senderId }, order: { country: 'ASC' } });
      return { sender: saved, countries: all };
    });
  }
}
