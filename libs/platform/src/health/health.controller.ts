import { Controller, Get, Inject } from '@nestjs/common';
import { InternalPublic } from '@meld/auth';
import { ApiExcludeController } from '@meld/api';
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

  /**
   * Readiness: every store this app needs answers; 503 names the ones that do not. A failed
   * check marked `degraded` answers 200 with `status: "degraded"`, naming it (ADR 0348).
   */
  @Get('readyz')
  // Without swaggerDocumentation Terminus does not require @nestjs/swagger at boot (ADR 0355);
  // this controller is left out of the document anyway.
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  ready() {
    return this.health.check(
      this.checks.map((c) => async () => {
        const result = await this.indicators
          .check(c.name)
          .attempt(async ({ signal }) => runReadinessCheck(c, signal))
          .withTimeout(READINESS_TIMEOUT_MS);
        const { status, ...data } = result[c.name]!;
        return status === 'down' && c.failure === 'degraded' ? this.indicators.check(c.name).degraded(data) : result;
      }),
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
