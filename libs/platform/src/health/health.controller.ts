import { Controller, Get, Inject } from '@nestjs/common';
import { InternalPublic } from '@meld/auth';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { runReadinessCheck } from './check-gauge';
import { READINESS_CHECKS, READINESS_TIMEOUT_MS, type ReadinessCheck } from './readiness-check';

@ApiExcludeController()
@InternalPublic()
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[],
  ) {}

  /** Liveness: the process answers. Never touches a store, so a store outage does not restart pods. */
  @Get('livez')
  live() {
    return { status: 'ok' };
  }

  /** Readiness: every store this app needs answers; 503 names the ones that do not. */
  @Get('readyz')
  @HealthCheck()
  ready() {
    return this.health.check(
      this.checks.map(
        (c) => () =>
          this.indicators
            .check(c.name)
            .attempt(async ({ signal }) => runReadinessCheck(c, signal))
            .withTimeout(READINESS_TIMEOUT_MS),
      ),
    );
  }
}

/** `/healthz` is liveness on every app but the gateway, whose `/healthz` is the whole-system check. */
@ApiExcludeController()
@InternalPublic()
@Controller()
export class AliveController {
  @Get('healthz')
  alive() {
    return { status: 'ok' };
  }
}
