import { expect } from '@jest/globals';
import type { AdminGateway } from './admin-gateway';
import { unique } from './admin-gateway';

/** An organization and a project of it, through the admin API (asserting each step succeeded). */
export async function createOrganization(gw: AdminGateway, body: Record<string, unknown> = {}): Promise<string> {
  const res = await gw.call('POST', '/organizations', { name: unique('org'), plan: 's', ...body });
  expect(res.status).toBe(201);
  return res.body.entity.id;
}

export async function createProject(gw: AdminGateway, organizationId: string, body: Record<string, unknown> = {}): Promise<{ id: string; uid: string }> {
  const res = await gw.call('POST', `/organizations/${organizationId}/projects`, { name: 'Test project', uid: unique('p'), ...body });
  expect(res.status).toBe(201);
  return { id: res.body.entity.id, uid: res.body.entity.uid };
}

export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** The `details.fields` of a 400, as [path, message] pairs, for compact assertions. */
export const fieldsOf = (body: { details?: { fields?: { path: string; message: string }[] } }) => (body.details?.fields ?? []).map((f) => [f.path, f.message]);
