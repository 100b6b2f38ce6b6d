import { DATA_SOURCE, WebhookEntity } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

@Injectable()
export class WebhooksRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  find(organizationId: string, kind: WebhookEntity['kind']): Promise<WebhookEntity | null> {
    return this.ds.getRepository(WebhookEntity).findOneBy({ organizationId, kind });
  }

  /** One webhook per organization and kind: insert or replace its url and secret. */
  async upsert(organizationId: string, kind: WebhookEntity['kind'], url: string, secret: string): Promise<WebhookEntity> {
    const repo = this.ds.getRepository(WebhookEntity);
    await repo.upsert({ organizationId, kind, url, secret }, { conflictPaths: ['organizationId', 'kind'] });
    return repo.findOneByOrFail({ organizationId, kind });
  }
}
