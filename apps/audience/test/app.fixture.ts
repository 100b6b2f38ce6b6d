import type { INestApplication } from '@nestjs/common';
import { DATA_SOURCE } from '@meld/db';
import { bootstrapApp, meldAppModule } from '@meld/platform';
import { testEnv, waitFor } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { PRINCIPAL_SECRET } from './tenancy.fixture';

/** The audience app in-process on the test stores, ready (Postgres connected). */
export async function startAudience(): Promise<{ app: INestApplication; base: string; db: DataSource }> {
  const env = testEnv();
  const app = await bootstrapApp({
    app: 'audience',
    module: meldAppModule(appDefinition, {
      LOG_LEVEL: 'silent',
      MELD_PRINCIPAL_SECRET: PRINCIPAL_SECRET,
      MELD_POSTGRES_URL: env.postgresUrl,
      MELD_CLICKHOUSE_URL: env.clickhouseUrl,
      MELD_CLICKHOUSE_DB: env.clickhouseDatabase,
    }),
    host: '127.0.0.1',
    port: 0,
  });
  const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const db = app.get<DataSource>(DATA_SOURCE);
  await waitFor('audience connected to Postgres', async () => db.isInitialized);
  return { app, base, db };
}
