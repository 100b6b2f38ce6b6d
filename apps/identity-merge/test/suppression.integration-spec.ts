import { randomUUID } from 'node:crypto';
import { DataSourceEntity } from '@meld/db';
import { seedTenancy } from '@meld/fixtures';
import type { DataSource } from 'typeorm';
import { MergeRepository } from '../src/merge/merge.repository';
import { MergeContactsCommand } from '../src/merge/usecases/merge-contacts/merge-contacts.command';
import { MergeContacts } from '../src/merge/usecases/merge-contacts/merge-contacts.usecase';
import { ownDatabase } from './app.fixture';

/**
 * Suppression survivorship on the real Postgres (ADRs 0048, 0361): a `_suppressed_sms: true`
 * held by any member wins over the priority winner, so merging never makes a suppressed number
 * reachable; once the member that held it clears it (null, as messaging lifts a suppression) the
 * contact is reachable again.
 */
describe('identity merge: suppression survivorship', () => {
  const store = ownDatabase('identity_merge_suppression');
  let db: DataSource;
  let merge: MergeContacts;
  beforeAll(() => {
    db = store.db();
    merge = new MergeContacts(new MergeRepository(db));
  });

  /** The source contact's whole state (a null value is a cleared attribute, as upsertSourceContacts leaves it: absent), then the merge step. */
  async function put(projectId: string, dataSourceId: string, userId: string, attributes: Record<string, unknown>) {
    const kept = Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== null));
    const at = new Date().toISOString();
    await db.query(
      `INSERT INTO source_contacts (project_id, data_source_id, user_id, attributes, attribute_at, version) VALUES ($1, $2, $3, $4, $5, 1)
       ON CONFLICT (project_id, data_source_id, user_id) DO UPDATE SET attributes = EXCLUDED.attributes, attribute_at = EXCLUDED.attribute_at, version = source_contacts.version + 1`,
      [projectId, dataSourceId, userId, JSON.stringify(kept), JSON.stringify(Object.fromEntries(Object.keys(attributes).map((k) => [k, at])))],
    );
    await merge.execute(MergeContactsCommand.forContact({ projectId, dataSourceId, userId }));
    const [row]: Array<{ audience_id: string }> = await db.query(`SELECT audience_id FROM audience_members WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3`, [projectId, dataSourceId, userId]);
    return row!.audience_id;
  }
  const merged = async (projectId: string, audienceId: string): Promise<{ attributes: Record<string, unknown>; lineage: Record<string, string> }> =>
    (await db.query(`SELECT attributes, lineage FROM audience_contacts WHERE project_id = $1 AND id = $2`, [projectId, audienceId]))[0];

  it('keeps a true held by any member over the priority winner, and lifts it when that member clears it', async () => {
    const { project, dataSource: api } = await seedTenancy(db, 'suppression');
    const messaging = await db.getRepository(DataSourceEntity).save({ projectId: project.id, uid: `meld-messaging-${randomUUID().slice(0, 8)}`, name: 'Meld messaging', connector: 'meld-messaging', priority: 0 });
    // A higher-priority source holding another value (only messaging writes it today, but an
    // older or imported value must not make the number reachable).
    const crm = await db.getRepository(DataSourceEntity).save({ projectId: project.id, uid: `crm-${randomUUID().slice(0, 8)}`, name: 'CRM', connector: 'crm', priority: 10 });
    const phone = '+33612345678';
    const a = await put(project.id, api.id, 'ann', { _email: 'ann@x.com', _phone_mobile: phone });
    await put(project.id, crm.id, 'c-ann', { _email: 'ann@x.com', _suppressed_sms: false });
    const b = await put(project.id, messaging.id, 'ann', { _suppressed_sms: true });
    expect(b).toBe(a);
    expect(await merged(project.id, a)).toMatchObject({ attributes: { _suppressed_sms: true }, lineage: { _suppressed_sms: messaging.id } });

    await put(project.id, messaging.id, 'ann', { _suppressed_sms: null });
    expect((await merged(project.id, a)).attributes._suppressed_sms).toBe(false);
  });
});
