import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';
import { CoverageModule } from './coverage/coverage.module';
import { RetentionModule } from './retention/retention.module';
import { VolumesModule } from './volumes/volumes.module';
import { SINK_OPTIONS, sinkOptions } from './sinks/sink-options';
import { SinksConsumer } from './sinks/sinks.consumer';

export const appDefinition: MeldAppDefinition = {
  name: 'probes',
  port: APPS['probes'].port,
  stores: APPS['probes'].stores,
  // Batch work (the sinks; probe answers take seconds): on a shared machine the request path goes first.
  cpuNice: 19,
  imports: [CoverageModule, VolumesModule, RetentionModule],
  providers: [{ provide: SINK_OPTIONS, useFactory: () => sinkOptions() }, SinksConsumer],
};
