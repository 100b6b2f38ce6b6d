import topics from './topics.json';
import { contactChange, keys, smsStatusChange, topicSchemas } from './index';

describe('topic contracts', () => {
  it('has a schema for every topic in topics.json and no other', () => {
    expect(Object.keys(topicSchemas).sort()).toEqual(topics.topics.map((t) => t.name).sort());
  });

  it('accepts an upsert with a clearing null and refuses an unknown kind', () => {
    const msg = { schemaVersion: 1, kind: 'upsert', projectId: 'p', dataSourceId: 'd', userId: 'u', version: 3, at: '2026-11-21T10:00:00.000Z', patch: { _email: 'a@b.c', _phone_mobile: null } };
    expect(contactChange.parse(msg)).toEqual(msg);
    expect(contactChange.safeParse({ ...msg, kind: 'rename' }).success).toBe(false);
  });

  it('refuses an SMS status outside the lifecycle', () => {
    const msg = { schemaVersion: 1, projectId: 'p', smsId: 's', audienceId: null, status: 'delivered', messagesCount: 1, at: '2026-11-21T10:00:00Z' };
    expect(smsStatusChange.safeParse(msg).success).toBe(true);
    expect(smsStatusChange.safeParse({ ...msg, status: 'read' }).success).toBe(false);
  });

  it('keys one contact to one partition key', () => {
    expect(keys.sourceContact('p1', 'ds1', 'u/1')).toBe('p1/ds1/u/1');
  });
});
