import type { INestApplication } from '@nestjs/common';
import { DATA_SOURCE } from '@meld/db';
import { bootstrapApp, meldAppModule } from '@meld/platform';
import { testEnv, waitFor } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { PRINCIPAL_SECRET } from './tenancy.fixture';

/** The ingest app in-process on the test stores, ready (Postgres connected). */
export async function startIngest(): Promise<{ app: INestApplication; base: string; db: DataSource }> {
  const env = testEnv();
  const app = await bootstrapApp({
    app: 'ingest',
    module: meldAppModule(appDefinition, {
      LOG_LEVEL: 'silent',
      MELD_PRINCIPAL_SECRET: PRINCIPAL_SECRET,
      MELD_POSTGRES_URL: env.postgresUrl,
      MELD_KAFKA_BROKERS: env.kafkaBrokers.join(','),
    }),
    host: '127.0.0.1',
    port: 0,
  });
  const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const db = app.get<DataSource>(DATA_SOURCE);
  await waitFor('ingest connected to Postgres', async () => db.isInitialized);
  return { app, base, db };
}
