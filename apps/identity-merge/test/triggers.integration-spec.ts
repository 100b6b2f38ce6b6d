import { randomUUID } from 'node:crypto';
import { Topics, defaultAttributionConfig, safeErrorMessage, defaultGeneralConfig, keys, type ContactChange, type EventAccepted, type EventsErased } from '@meld/contracts';
import { DataSourceEntity, OrganizationEntity, ProjectEntity } from '@meld/db';
import { createProducer, type Producer } from '@meld/kafka';
import { testEnv, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import type { DataSource } from 'typeorm';
import { AutomationTriggersConsumer } from '../src/triggers/automation-triggers.consumer';
import { startIdentityMerge } from './app.fixture';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
interface Seen {
  key: string;
  value: Json;
  headers: Record<string, string>;
}

const MERGE_WAIT_MS = 4000;

/** meld.events.v1 in (automation events flagged by ingest), meld.automation-triggers.v1 out, keyed by the merged audience contact. */
describe('identity-merge automation triggers', () => {
  let app: INestApplication;
  let db: DataSource;
  /** This test's consumer group: other tests' identity-merge instances dead-letter the same triggers, with their own wait. */
  let group: string;
  let producer: Producer;
  const readers: Consumer[] = [];
  const triggers: Seen[] = [];
  const deadLetters: Seen[] = [];
  let project: { id: string; api: string; crm: string };
  /** What identity-merge logs, as its Nest logger is given it (Errors as the pino logger words them). */
  const logLines: string[] = [];
  const capture = (level: string) => (...args: unknown[]) => void logLines.push(`${level} ${args.map((a) => (a instanceof Error ? safeErrorMessage(a) : typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}`);

  async function read(topic: string, into: Seen[]) {
    const kafka = new Kafka({ brokers: testEnv().kafkaBrokers, clientId: 'triggers-test', logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `triggers-test-${randomUUID()}`, maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const value = JSON.parse(message.value?.toString() ?? 'null');
        if (value?.projectId !== project?.id) return;
        const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
        into.push({ key: message.key?.toString() ?? '', value, headers });
      },
    });
    readers.push(consumer);
  }

  beforeAll(async () => {
    const env = testEnv();
    ({ app, db, group } = await startIdentityMerge({ mergeWaitMs: MERGE_WAIT_MS }));
    app.useLogger({ log: capture('info'), warn: capture('warn'), error: capture('error'), debug: capture('debug'), verbose: capture('verbose'), fatal: capture('fatal') });
    producer = createProducer({ brokers: env.kafkaBrokers, clientId: 'triggers-test' });
    const tag = randomUUID().slice(0, 8);
    const org = await db.getRepository(OrganizationEntity).save({ name: `Org ${tag}`, plan: 'm' as const });
    const p = await db.getRepository(ProjectEntity).save({
      uid: `triggers-${tag}`,
      organizationId: org.id,
      name: `Triggers ${tag}`,
      generalConfig: defaultGeneralConfig() as unknown as ProjectEntity['generalConfig'],
      attributionConfig: defaultAttributionConfig(),
      mergingAttributes: ['_email'],
    });
    const api = await db.getRepository(DataSourceEntity).save({ projectId: p.id, uid: `api-${tag}`, name: 'api', connector: 'api' });
    const crm = await db.getRepository(DataSourceEntity).save({ projectId: p.id, uid: `crm-${tag}`, name: 'crm', connector: 'crm', priority: 1 });
    project = { id: p.id, api: api.id, crm: crm.id };
    await Promise.all([read(Topics.automationTriggers, triggers), read(`${Topics.events}.dlq`, deadLetters)]);
    await app.get(AutomationTriggersConsumer).started();
  }, 60000);

  afterAll(async () => {
    await Promise.all(readers.map((r) => r.disconnect()));
    await producer?.disconnect();
    await app?.close();
  });

  /** What ingest commits for a contact write: the row, then (unless `publish` is false) its message. */
  async function contact(dataSourceId: string, userId: string, email: string, options: { publish?: boolean; deleted?: boolean } = {}) {
    const at = new Date().toISOString();
    await db.query(
      `INSERT INTO source_contacts (project_id, data_source_id, user_id, attributes, attribute_at, version, deleted_at) VALUES ($1, $2, $3, $4, $5, 1, $6)`,
      [project.id, dataSourceId, userId, JSON.stringify(options.deleted ? {} : { _email: email }), JSON.stringify(options.deleted ? {} : { _email: at }), options.deleted ? at : null],
    );
    if (options.publish === false) return;
    const change: ContactChange = { schemaVersion: 1, kind: 'upsert', projectId: project.id, dataSourceId, userId, version: 1, at, patch: { _email: email } };
    await producer.send(Topics.contacts, [{ key: keys.sourceContact(project.id, dataSourceId, userId), value: change }]);
  }

  async function event(dataSourceId: string, userId: string, automation: boolean, eventId = `e-${randomUUID()}`) {
    const now = new Date().toISOString();
    const value: EventAccepted = {
      schemaVersion: 1,
      projectId: project.id,
      dataSourceId,
      userId,
      eventId,
      eventType: 'signup',
      eventDate: now,
      receivedAt: now,
      parameters: { plan: 'pro' },
      ...(automation ? { automation: true } : {}),
    };
    await producer.send(Topics.events, [{ key: keys.sourceContact(project.id, dataSourceId, userId), value }]);
    return value.eventId;
  }

  const audienceOf = async (dataSourceId: string, userId: string): Promise<string | undefined> =>
    (await db.query(`SELECT audience_id FROM audience_members WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3`, [project.id, dataSourceId, userId]))[0]?.audience_id;

  it('publishes an automation event of a merged contact keyed by the audience contact both sources share; plain events start nothing', async () => {
    await contact(project.api, 'ann', 'ann@x.com');
    await contact(project.crm, 'ann-crm', ' Ann@X.com');
    const merged = await waitFor('both sources merged', async () => {
      const [a, b] = [await audienceOf(project.api, 'ann'), await audienceOf(project.crm, 'ann-crm')];
      return a && a === b ? a : undefined;
    }, { timeoutMs: 45000 });
    const plain = await event(project.api, 'ann', false);
    const fromCrm = await event(project.crm, 'ann-crm', true);
    const fromApi = await event(project.api, 'ann', true);
    const [t1] = await waitFor('the crm trigger', async () => triggers.filter((t) => t.value.eventId === fromCrm).length ? triggers.filter((t) => t.value.eventId === fromCrm) : undefined, { timeoutMs: 30000 });
    const [t2] = await waitFor('the api trigger', async () => triggers.filter((t) => t.value.eventId === fromApi).length ? triggers.filter((t) => t.value.eventId === fromApi) : undefined);
    expect(t1).toMatchObject({ key: `${project.id}/${merged}`, value: { audienceId: merged, dataSourceId: project.crm, userId: 'ann-crm', eventType: 'signup', parameters: { plan: 'pro' } } });
    expect(t2.value.audienceId).toBe(merged);
    expect(triggers.some((t) => t.value.eventId === plain)).toBe(false);
  }, 90000);

  it('an automation event that overtakes its contact waits for the merge', async () => {
    await contact(project.crm, 'bob', 'bob@x.com', { publish: false });
    const eventId = await event(project.crm, 'bob', true);
    await new Promise((r) => setTimeout(r, 1000));
    expect(triggers.some((t) => t.value.eventId === eventId)).toBe(false);
    await producer.send(Topics.contacts, [
      { key: keys.sourceContact(project.id, project.crm, 'bob'), value: { schemaVersion: 1, kind: 'upsert', projectId: project.id, dataSourceId: project.crm, userId: 'bob', version: 1, at: new Date().toISOString(), patch: { _email: 'bob@x.com' } } },
    ]);
    const [t] = await waitFor('the trigger after the merge', async () => (triggers.some((x) => x.value.eventId === eventId) ? triggers.filter((x) => x.value.eventId === eventId) : undefined), { timeoutMs: 30000 });
    expect(t.value.audienceId).toBe(await audienceOf(project.crm, 'bob'));
  }, 60000);

  it('dead-letters, with the reason, the trigger of a contact never merged and of a deleted one; erase markers pass', async () => {
    await contact(project.api, 'ghost', 'ghost@x.com', { publish: false });
    // Written longer ago than the wait: failed at once, here and by any other group reading
    // the shared topic (an identity-merge of an e2e run waits 5 min for a fresh write).
    await db.query(`UPDATE source_contacts SET updated_at = now() - interval '1 hour' WHERE project_id = $1 AND user_id = 'ghost'`, [project.id]);
    await contact(project.api, 'gone', 'gone@x.com', { deleted: true, publish: false });
    // Event ids as sources build them, from a key holding an email or a number (ADR 0354).
    const never = await event(project.api, 'ghost', true, `order-ghost-${randomUUID().slice(0, 8)}@x.com-1`);
    const deleted = await event(project.api, 'gone', true, `sms-+3361${String(Date.now()).slice(-7)}-2`);
    const erase: EventsErased = { schemaVersion: 1, kind: 'erase', projectId: project.id, dataSourceId: project.api, userId: 'gone', version: 2, at: new Date().toISOString() };
    await producer.send(Topics.events, [{ key: keys.sourceContact(project.id, project.api, 'gone'), value: erase }]);
    const dead = await waitFor('both dead letters', async () => {
      const found = deadLetters.filter((d) => d.headers['dlq-group'] === `${group}-triggers` && [never, deleted].includes(d.value.eventId));
      return found.length >= 2 ? found : undefined;
    }, { timeoutMs: 20000 });
    const reason = (id: string) => dead.find((d) => d.value.eventId === id)!.headers['dlq-error'];
    expect(reason(never)).toMatch(/not merged within 4000 ms of its latest write/);
    expect(reason(deleted)).toMatch(/deleted before its trigger was resolved/);
    expect(dead.every((d) => d.headers['dlq-reason'] === 'rejected')).toBe(true);
    expect(deadLetters.some((d) => d.value.kind === 'erase')).toBe(false);
    expect(triggers.some((t) => [never, deleted].includes(t.value.eventId))).toBe(false);
    await waitFor('the dead-letter lines', async () => logLines.filter((l) => l.includes('message dead-lettered') && l.includes('automation trigger')).length >= 2 || undefined, { timeoutMs: 10000 });
    expect(logLines.filter((l) => l.includes(never) || l.includes(deleted))).toEqual([]);
  }, 60000);

  it('a trigger published while the merge is still behind is logged without its event id', async () => {
    await contact(project.api, 'late', 'late@x.com');
    await waitFor('the contact merged', async () => audienceOf(project.api, 'late'), { timeoutMs: 45000 });
    // A later write the merge has not applied, made longer ago than the wait: published at once, stale.
    await db.query(`UPDATE source_contacts SET version = version + 1, updated_at = now() - interval '1 hour' WHERE project_id = $1 AND user_id = 'late'`, [project.id]);
    const eventId = await event(project.api, 'late', true, `order-late-${randomUUID().slice(0, 8)}@x.com-1`);
    await waitFor('the stale trigger', async () => triggers.some((t) => t.value.eventId === eventId) || undefined, { timeoutMs: 30000 });
    await waitFor('the stale line', async () => logLines.some((l) => l.includes('the merge was still behind')) || undefined, { timeoutMs: 10000 });
    expect(logLines.filter((l) => l.includes(eventId))).toEqual([]);
  }, 90000);
});
