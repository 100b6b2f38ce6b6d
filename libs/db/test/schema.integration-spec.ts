import { testEnv } from '@meld/testing';
import { createDataSource } from '../src';

// Migrations are hand-written SQL; this catches an entity that drifted from them.
// Foreign keys live only in the migrations (repositories query explicitly, entities carry
// no relations), so the only difference TypeORM may see is that it would drop them.
describe('Postgres schema', () => {
  it('matches the entities after migrations', async () => {
    const ds = createDataSource({ url: testEnv().postgresUrl, applicationName: 'schema-spec' });
    await ds.initialize();
    try {
      expect(await ds.showMigrations()).toBe(false);
      const { upQueries } = await ds.driver.createSchemaBuilder().log();
      const drift = upQueries.map((q) => q.query).filter((q) => !/^ALTER TABLE "\w+" DROP CONSTRAINT "fk_/.test(q));
      expect(drift).toEqual([]);
    } finally {
      await ds.destroy();
    }
  });
});
