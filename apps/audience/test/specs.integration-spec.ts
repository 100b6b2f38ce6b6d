import { RESERVED_ATTRIBUTES, SYSTEM_EVENT_TYPES } from '@meld/contracts';
import type { INestApplication } from '@nestjs/common';
import { AttributeListSchema, EventParameterListSchema, EventTypeListSchema } from '../src/specs/specs.schema';
import { startAudience } from './app.fixture';
import { type Json, principalHeader, seedTenancy } from '@meld/fixtures';

describe('project specs (audience)', () => {
  let app: INestApplication;
  let base: string;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;

  beforeAll(async () => {
    let db;
    ({ app, base, db } = await startAudience());
    tenancy = await seedTenancy(db);
  });
  afterAll(() => app?.close());

  const get = async (path: string) => {
    const url = `${base}/v1/project/${tenancy.project.uid}/specs${path}`;
    const res = await fetch(url, { headers: principalHeader(tenancy, {}, { app: 'audience', url }) });
    return { status: res.status, body: (await res.json()) as Json };
  };

  it('lists the event catalogue as Event type spec entries', async () => {
    const { status, body } = await get('/events');
    expect(status).toBe(200);
    expect(EventTypeListSchema.parse(body)).toBeTruthy();
    const purchase = { uid: 'purchase', name: 'Purchase', category: 'ecommerce', attribution: true, automation: false, important: false };
    // The declared types, then Meld's own, flagged (ADR 0336).
    expect(body.entity[0]).toEqual(purchase);
    expect(body.entity.slice(1)).toEqual(SYSTEM_EVENT_TYPES.map((t) => ({ uid: t.uid, name: t.name, category: 'marketing', attribution: false, automation: false, important: false, system: true })));
    expect(body.entity.map((e: { uid: string }) => e.uid)).toContain('_sms_delivered');
    expect(body.metadata).toEqual({ count: 1 + SYSTEM_EVENT_TYPES.length });
  });

  it("lists the parameters of Meld's own event types, as filters name them", async () => {
    const { status, body } = await get('/events/_sms_delivered');
    expect(status).toBe(200);
    expect(EventParameterListSchema.parse(body)).toBeTruthy();
    expect(body.entity.map((p: { parameter: string }) => p.parameter)).toEqual(['smsId', 'senderId', 'messagesCount', 'error']);
    expect(body.entity[0]).toEqual({ parameter: 'smsId', title: 'SMS id', dataType: 'string', required: true, multiValue: 1, maxLength: null });
    expect(body.metadata.eventType).toMatchObject({ uid: '_sms_delivered', system: true });
    expect((await get('/events/_sms_nope')).status).toBe(404);
  });

  it('lists the parameter specs of an event type; an unknown type is 404', async () => {
    const { status, body } = await get('/events/purchase');
    expect(status).toBe(200);
    expect(EventParameterListSchema.parse(body)).toBeTruthy();
    expect(body.entity).toEqual([
      { parameter: 'amount', title: 'Amount', dataType: 'number', required: false, multiValue: 1, maxLength: null },
      { parameter: 'product-id', title: 'Product id', dataType: 'string', required: true, multiValue: 1, maxLength: 64 },
    ]);
    expect(body.metadata.eventType.uid).toBe('purchase');
    const missing = await get('/events/refund');
    expect(missing).toEqual({ status: 404, body: { statusCode: 404, error: 'Not Found', message: 'event type "refund" not found' } });
  });

  it('lists the whole attribute catalogue with its flags, reserved first', async () => {
    const { status, body } = await get('/attributes');
    expect(status).toBe(200);
    expect(AttributeListSchema.parse(body)).toBeTruthy();
    const uids = body.entity.map((a: { uid: string }) => a.uid);
    expect(uids.slice(0, RESERVED_ATTRIBUTES.length).sort()).toEqual(RESERVED_ATTRIBUTES.map((a) => a.uid).sort());
    // Both were inserted together (same created_at): ties are ordered by uid.
    expect(uids.slice(RESERVED_ATTRIBUTES.length)).toEqual(['legacy_score', 'loyalty_tier']);
    expect(body.entity.find((a: { uid: string }) => a.uid === '_email')).toEqual({
      uid: '_email',
      label: 'Email',
      type: 'email',
      multivalue: false,
      enabled: true,
      visible: true,
      internal: false,
      unique: true,
      reserved: true,
    });
    expect(body.entity.find((a: { uid: string }) => a.uid === 'legacy_score')).toMatchObject({ enabled: false, internal: true, reserved: false });
    expect(body.metadata.count).toBe(uids.length);
  });
});
