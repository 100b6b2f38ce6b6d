import { type DataSourceEntity, MESSAGING_CONNECTOR } from '@meld/db';
import { Injectable, NotFoundException } from '@nestjs/common';
import type { StreamCommand } from './stream.command';
import { StreamRepository } from './stream.repository';

/**
 * The data source of the path must belong to the project, and a data-source token may use
 * only its own: anything else is 404 (ingest spec: mismatched identifiers), checked here
 * again although the gateway checks it too, because this app must not trust a path.
 */
@Injectable()
export class StreamScope {
  constructor(private readonly streams: StreamRepository) {}

  async dataSource(command: StreamCommand): Promise<DataSourceEntity> {
    const dataSource = await this.streams.findDataSource(command.projectId, command.dataSourceId);
    this.requireUsable(command, dataSource?.id ?? null);
    return dataSource!;
  }

  /**
   * The same rule for a caller that looked the data source up itself (the event write does,
   * in one query with its event types): `foundId` is the project's data source of the path.
   */
  requireUsable(command: StreamCommand, foundId: string | null): void {
    if (!foundId || (command.tokenDataSourceId !== null && command.tokenDataSourceId !== foundId)) this.notFound();
  }

  /**
   * A write of contacts or events (not a delete, nor a read): the data source must be usable
   * and not the project's `meld-messaging` one, which only the messaging app writes (ADR 0181):
   * an `opt-in` written there would lift the opt-out an inbound STOP left. 404, as a data source
   * the token may not write to (ingest spec, Errors).
   */
  async writableDataSource(command: StreamCommand): Promise<DataSourceEntity> {
    const dataSource = await this.dataSource(command);
    this.requireWritable(dataSource.connector);
    return dataSource;
  }

  /** The same rule for a caller that looked the data source's connector up itself (the event write). */
  requireWritable(connector: string | null): void {
    if (connector === MESSAGING_CONNECTOR) {
      throw new NotFoundException(`this data source is Meld's own (connector ${MESSAGING_CONNECTOR}): only the messaging app writes to it; write to an API data source`);
    }
  }

  /** The answer for a path whose data source is not the project's (or not a data source at all). */
  notFound(): never {
    throw new NotFoundException('data source not found');
  }
}
