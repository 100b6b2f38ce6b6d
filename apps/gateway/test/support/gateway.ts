import type { INestApplication } from '@nestjs/common';
import { bootstrapApp, meldAppModule } from '@meld/platform';
import { appDefinition } from '../../src/app.definition';

/**
 * The real gateway app in this process on a free port. The gateway reads its settings
 * from `process.env` when its module starts, so they are set for the boot and restored after.
 */
export async function startGateway(env: Record<string, string>, options: { trustProxy?: string } = {}): Promise<{ app: INestApplication; url: string; close(): Promise<void> }> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, { LOG_LEVEL: 'silent', ...env });
  try {
    const app = await bootstrapApp({ app: 'gateway', module: meldAppModule(appDefinition, process.env), host: '127.0.0.1', port: 0, trustProxy: options.trustProxy });
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    return { app, url, close: () => app.close() };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
