import { Controller, Get, Header } from '@nestjs/common';
import { InternalPublic } from '@meld/auth';
import { ApiExcludeController } from '@meld/api';
import { metricsRegistry } from './metrics';

@ApiExcludeController()
@InternalPublic()
@Controller()
export class MetricsController {
  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4')
  metrics(): Promise<string> {
    return metricsRegistry.metrics();
  }
}
