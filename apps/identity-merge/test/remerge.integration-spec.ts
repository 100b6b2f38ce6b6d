import { randomUUID } from 'node:crypto';
import { defaultAttributionConfig, defaultGeneralConfig } from '@meld/contracts';
import { DataSourceEntity, OrganizationEntity, ProjectEntity, createDataSource } from '@meld/db';
import { privateDatabase } from '@meld/fixtures';
import { testEnv } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { MergeRepository } from '../src/merge/merge.repository';
import { MergeContactsCommand } from '../src/merge/usecases/merge-contacts/merge-contacts.command';
import { MergeContacts } from '../src/merge/usecases/merge-contacts/merge-contacts.usecase';
import { RemergeRepository } from '../src/remerge/remerge.repository';
import { RemergeWorker } from '../src/remerge/remerge.worker';
import { RemergeProject } from '../src/remerge/usecases/remerge-project/remerge-project.usecase';

/** A change of merging attributes merges a project's contacts again (ADR 0331), on the real Postgres. */
describe('identity merge: merging again after the merging attributes change', () => {
  let db: DataSource;
  let merge: MergeContacts;
  let remerges: RemergeRepository;
  let database: Awaited<ReturnType<typeof privateDatabase>> | undefined;
  // One contact per step: the cursor and the lease are exercised between steps.
  const worker = () => new RemergeWorker(remerges, new RemergeProject(remerges, merge, 1), 1000);

  beforeAll(async () => {
    database = await privateDatabase(testEnv().postgresUrl, 'identity_remerge');
    db = createDataSource({ url: database.url, applicationName: 'identity-remerge-test', poolSize: 4 });
    await db.initialize();
    merge = new MergeContacts(new MergeRepository(db));
    remerges = new RemergeRepository(db);
  }, 60000);
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  async function project() {
    const tag = randomUUID().slice(0, 8);
    const org = await db.getRepository(OrganizationEntity).save({ name: `Org ${tag}`, plan: 'm' as const });
    const p = await db.getRepository(ProjectEntity).save({
      uid: `remerge-${tag}`,
      organizationId: org.id,
      name: `Remerge ${tag}`,
      locale: 'en_GB',
      generalConfig: defaultGeneralConfig() as unknown as ProjectEntity['generalConfig'],
      attributionConfig: defaultAttributionConfig(),
      mergingAttributes: [],
    });
    const source = (uid: string, connector: string) => db.getRepository(DataSourceEntity).save({ projectId: p.id, uid: `${uid}-${tag}`, name: uid, connector, priority: 0 });
    return { id: p.id, crm: (await source('crm', 'crm')).id, shop: (await source('shop', 'shop')).id };
  }

  const write = (projectId: string, dataSourceId: string, userId: string, attributes: Record<string, string>) =>
    db.query(`INSERT INTO source_contacts (project_id, data_source_id, user_id, attributes, attribute_at, version) VALUES ($1, $2, $3, $4, $5, 1)`, [
      projectId,
      dataSourceId,
      userId,
      attributes,
      Object.fromEntries(Object.keys(attributes).map((k) => [k, new Date().toISOString()])),
    ]);

  /** What the gateway writes with a change of merging attributes (ProjectsRepository.update). */
  async function changeMergingAttributes(projectId: string, attributes: string[]) {
    await db.query(`UPDATE projects SET merging_attributes = $2 WHERE id = $1`, [projectId, attributes]);
    await db.query(
      `INSERT INTO remerge_requests (project_id, requested_at) VALUES ($1, clock_timestamp())
       ON CONFLICT (project_id) DO UPDATE SET requested_at = EXCLUDED.requested_at, cursor_data_source_id = NULL, cursor_user_id = NULL, contacts_done = 0, lease_until = NULL, done_at = NULL`,
      [projectId],
    );
  }

  const audiences = async (projectId: string) => {
    const rows: Array<{ user_id: string; audience_id: string }> = await db.query(`SELECT user_id, audience_id FROM audience_members WHERE project_id = $1 ORDER BY user_id`, [projectId]);
    return new Map(rows.map((r) => [r.user_id, r.audience_id]));
  };
  const request = async (projectId: string) =>
    (await db.query(`SELECT contacts_done::int AS done, done_at IS NOT NULL AS finished, lease_until FROM remerge_requests WHERE project_id = $1`, [projectId]))[0];

  it('merges contacts that now share a merging attribute, and splits them when it is removed', async () => {
    const p = await project();
    await write(p.id, p.crm, 'u1', { _email: 'ada@example.com', _first_name: 'Ada' });
    await write(p.id, p.shop, 'u2', { _email: 'ADA@example.com', plan: 'gold' });
    await write(p.id, p.crm, 'u3', { _email: 'bob@example.com' });
    await merge.execute(MergeContactsCommand.create(p.id, [{ dataSourceId: p.crm, userId: 'u1' }, { dataSourceId: p.shop, userId: 'u2' }, { dataSourceId: p.crm, userId: 'u3' }]));
    const before = await audiences(p.id);
    expect(new Set(before.values()).size).toBe(3);

    await changeMergingAttributes(p.id, ['_email']);
    expect(await worker().runOnce()).toBe(1);
    const merged = await audiences(p.id);
    expect(merged.get('u1')).toBe(merged.get('u2'));
    expect(merged.get('u3')).not.toBe(merged.get('u1'));
    const [contact] = await db.query(`SELECT attributes, datasources FROM audience_contacts WHERE project_id = $1 AND id = $2`, [p.id, merged.get('u1')]);
    expect(contact.attributes).toMatchObject({ _first_name: 'Ada', plan: 'gold' });
    expect(contact.datasources).toHaveLength(2);
    expect(await request(p.id)).toMatchObject({ done: 3, finished: true, lease_until: null });
    expect(await worker().runOnce()).toBe(0);

    await changeMergingAttributes(p.id, []);
    await worker().runOnce();
    const split = await audiences(p.id);
    expect(new Set(split.values()).size).toBe(3);
    expect((await db.query(`SELECT count(*)::int AS n FROM audience_contacts WHERE project_id = $1`, [p.id]))[0].n).toBe(3);
  });

  it('a newer change replaces a re-merge in progress, which starts over; a saved cursor survives a restart', async () => {
    const p = await project();
    for (const [source, user, email] of [[p.crm, 'a', 'x@example.com'], [p.shop, 'b', 'x@example.com'], [p.crm, 'c', 'y@example.com'], [p.shop, 'd', 'y@example.com']] as const) {
      await write(p.id, source, user, { _email: email });
    }
    await changeMergingAttributes(p.id, ['_email']);
    // A worker that stops after its first step (a shutdown): the lease is given up by expiry, the cursor kept.
    const first = await remerges.claim();
    let steps = 0;
    expect(await new RemergeProject(remerges, merge, 1).execute(first!, () => steps++ >= 1)).toBe('stopped');
    expect(await request(p.id)).toMatchObject({ done: 1, finished: false });
    expect(await remerges.claim()).toBeNull(); // still leased
    await db.query(`UPDATE remerge_requests SET lease_until = now() - interval '1 second' WHERE project_id = $1`, [p.id]);
    const resumed = await remerges.claim();
    expect(resumed).toMatchObject({ projectId: p.id, contactsDone: 1, cursor: expect.objectContaining({ userId: expect.any(String) }) });
    // A newer change lands while the resumed run works: it stops, and the new request runs from the start.
    let replaced = false;
    const racing = new RemergeProject(
      Object.assign(Object.create(remerges) as RemergeRepository, {
        advance: async (...args: Parameters<RemergeRepository['advance']>) => {
          if (!replaced) {
            replaced = true;
            await changeMergingAttributes(p.id, ['_email']);
          }
          return remerges.advance(...args);
        },
      }),
      merge,
      1,
    );
    expect(await racing.execute(resumed!)).toBe('replaced');
    expect(await worker().runOnce()).toBe(1);
    expect(await request(p.id)).toMatchObject({ done: 4, finished: true });
    const merged = await audiences(p.id);
    expect([merged.get('a') === merged.get('b'), merged.get('c') === merged.get('d'), merged.get('a') === merged.get('c')]).toEqual([true, true, false]);
  });
});
