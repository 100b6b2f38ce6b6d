import { Module } from '@nestjs/common';
import { ProbesSharedModule } from '../shared/probes-shared.module';
import { RetentionPruner } from './retention.pruner';

/** The scheduled retention pruning of ClickHouse events (ADR 0168). */
@Module({ imports: [ProbesSharedModule], providers: [RetentionPruner] })
export class RetentionModule {}
