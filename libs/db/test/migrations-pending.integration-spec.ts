import { Client } from 'pg';
import { testEnv } from '@meld/testing';
import { migratePostgres, postgresMigrationsPending } from '../src';

// What an app's init container waits on (ADR 0171): true on an empty database, false once migrated.
describe('postgresMigrationsPending', () => {
  const server = testEnv().postgresUrl;
  const name = `${new URL(server).pathname.slice(1)}_pending_${process.pid}`;
  const url = Object.assign(new URL(server), { pathname: `/${name}` }).toString();
  const admin = async (sql: string) => {
    const client = new Client({ connectionString: server });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };

  beforeAll(() => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => admin(`CREATE DATABASE ${name}`)));
  afterAll(() => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));

  it('is true before the migrate Job ran and false after', async () => {
    expect(await postgresMigrationsPending(url)).toBe(true);
    await migratePostgres(url, () => undefined);
    expect(await postgresMigrationsPending(url)).toBe(false);
  });
});
