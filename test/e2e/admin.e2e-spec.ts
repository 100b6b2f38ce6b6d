import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PUBLIC_ROUTES } from '@meld/contracts';
import { waitFor } from '@meld/testing';
import { SHARED_BASE, SHARED_GATEWAY_PORT, sharedSystem } from './support/shared-system';

// The operator's path, end to end: the eight apps as processes (the shared e2e system, ADR 0352),
// `meld bootstrap --json` and `meld admin` against the gateway, then the tokens it printed
// used on the public API through the gateway, revocation, and the merged OpenAPI document.
const GATEWAY_PORT = SHARED_GATEWAY_PORT;
const BASE = SHARED_BASE;
const root = join(__dirname, '../..');
const run = promisify(execFile);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function meld(...args: string[]): Promise<Json> {
  const { stdout } = await run(process.execPath, [join(root, 'tools/cli/meld.js'), ...args], {
    cwd: root,
    env: { ...process.env, MELD_PORT: String(GATEWAY_PORT), MELD_GATEWAY_URL: '' },
  });
  return stdout.trim() ? JSON.parse(stdout) : undefined;
}

async function get(path: string, token: string) {
  const res = await fetch(`${BASE}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Json) : undefined };
}

describe('operator bootstrap through the CLI, used through the gateway', () => {
  let boot: Json;

  beforeAll(async () => {
    if (!process.env.MELD_ADMIN_TOKEN) throw new Error('MELD_ADMIN_TOKEN is not set (npm test sets it)');
    await sharedSystem();
    boot = await meld('bootstrap', '--json', '--plan', 'm');
  }, 180000);

  it('bootstrap prints the organization, project, data source and a product token with every scope', async () => {
    expect(boot).toMatchObject({
      gateway: BASE,
      organization: { id: expect.any(String), plan: 'm' },
      project: { id: expect.any(String), uid: expect.stringMatching(/^local-project/) },
      dataSource: { id: expect.any(String), token: expect.stringMatching(/^mld_ds_/) },
      productToken: { id: expect.any(String), token: expect.stringMatching(/^mld_pt_/) },
    });
    const scopes = (await meld('admin', 'get', 'scopes')).entity;
    expect([...boot.productToken.scopes].sort()).toEqual([...scopes].sort());
    const org = await meld('admin', 'get', `organizations/${boot.organization.id}`);
    expect(org.metadata.projects).toEqual([{ id: boot.project.id, uid: boot.project.uid, name: 'Local project' }]);
  });

  it('the product token reads the project through the gateway: every field, unique attributes, funds (ACCOUNT_READ), scopes', async () => {
    const res = await get(`/v1/project/${boot.project.uid}`, boot.productToken.token);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(res.body.entity).toMatchObject({ id: boot.project.id, uid: boot.project.uid, projectStatus: 'active' });
    expect(Object.keys(res.body.entity.generalConfig)).toHaveLength(5);
    expect(res.body.metadata.uniqueAttributes).toEqual(['_user_id']);
    expect(res.body.metadata.organization).toMatchObject({ id: boot.organization.id, plan: 'm', funds: 0 });
    expect([...res.body.metadata.scopes].sort()).toEqual([...boot.productToken.scopes].sort());
  });

  it('catalogue written with `meld admin` shows in the specs, through the gateway', async () => {
    await meld('admin', 'post', `projects/${boot.project.uid}/event-types`, '--data', JSON.stringify({ uid: 'signup', name: 'Sign-up', category: 'crm', parameters: [{ parameter: 'plan', title: 'Plan', dataType: 'string' }] }));
    const events = await get(`/v1/project/${boot.project.uid}/specs/events`, boot.productToken.token);
    // The declared type, then Meld's own (ADR 0336).
    expect(events.body.entity.filter((e: { system?: boolean }) => !e.system).map((e: { uid: string }) => e.uid)).toEqual(['signup']);
    const params = await get(`/v1/project/${boot.project.uid}/specs/events/signup`, boot.productToken.token);
    expect(params.body.entity).toEqual([{ parameter: 'plan', title: 'Plan', dataType: 'string', required: false, multiValue: 1, maxLength: null }]);
    expect((await get(`/v1/project/${boot.project.uid}/specs/events/nope`, boot.productToken.token)).status).toBe(404);
    const attributes = await get(`/v1/project/${boot.project.uid}/specs/attributes`, boot.productToken.token);
    expect(attributes.body.entity.find((a: { uid: string }) => a.uid === '_email')).toMatchObject({ unique: true, reserved: true });
  });

  it('the data-source token reads its stream with the usage the gateway counted', async () => {
    const path = `/v1/project/${boot.project.uid}/datasource/${boot.dataSource.id}/stream`;
    const res = await get(path, boot.dataSource.token);
    expect(res.status).toBe(200);
    expect(res.body.entity.datasource).toMatchObject({ id: boot.dataSource.id, uid: boot.dataSource.uid, connector: 'api' });
    expect(res.body.entity.usage.rateLimit).toEqual({
      limit: Number(res.headers.get('x-ratelimit-limit')),
      remaining: Number(res.headers.get('x-ratelimit-remaining')),
      reset: Number(res.headers.get('x-ratelimit-reset')),
      window: 'minute',
    });
    const accepted = await get(`${path}/specs/attributes`, boot.dataSource.token);
    expect(accepted.body.entity.map((a: { uid: string }) => a.uid)).not.toContain('_datasources');
    expect((await get(`${path}/specs/events/signup`, boot.dataSource.token)).status).toBe(200);
  });

  it('a token revoked with `meld admin delete` is refused at once', async () => {
    const extra = await meld('admin', 'post', `organizations/${boot.organization.id}/tokens`, '--data', JSON.stringify({ scopes: ['ACCOUNT_READ'], projects: ['*'] }));
    expect((await get(`/v1/project/${boot.project.uid}`, extra.metadata.token)).status).toBe(200);
    expect(await meld('admin', 'delete', `tokens/${extra.entity.id}`)).toBeUndefined();
    await waitFor('revoked token refused', async () => (await get(`/v1/project/${boot.project.uid}`, extra.metadata.token)).status === 401, { timeoutMs: 3000 });
  });

  it('a data-source token is rotated with `meld admin`: the new one works at once, the old one until it is revoked', async () => {
    const stream = `/v1/project/${boot.project.uid}/datasource/${boot.dataSource.id}/stream`;
    const fresh = await meld('admin', 'post', `projects/${boot.project.uid}/datasources/${boot.dataSource.uid}/tokens`);
    expect(fresh.entity).toMatchObject({ kind: 'datasource', dataSourceId: boot.dataSource.id });
    expect((await get(stream, fresh.metadata.token)).status).toBe(200);
    expect((await get(stream, boot.dataSource.token)).status).toBe(200);
    expect(await meld('admin', 'delete', `tokens/${boot.dataSource.tokenId}`)).toBeUndefined();
    await waitFor('old data-source token refused', async () => (await get(stream, boot.dataSource.token)).status === 401, { timeoutMs: 3000 });
    expect((await get(stream, fresh.metadata.token)).status).toBe(200);
  });

  it('a change of merging attributes merges the contacts already written (ADR 0331)', async () => {
    const crm = await meld('admin', 'post', `projects/${boot.project.uid}/datasources`, '--data', JSON.stringify({ name: 'CRM e2e', connector: 'crm' }));
    const writeContact = async (dataSourceId: string, token: string, contact: Json) => {
      const res = await fetch(`${BASE}/v1/project/${boot.project.uid}/datasource/${dataSourceId}/stream/contacts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify([contact]),
      });
      expect(res.status).toBe(202);
    };
    const fresh = await meld('admin', 'post', `projects/${boot.project.uid}/datasources/${boot.dataSource.id}/tokens`);
    await writeContact(boot.dataSource.id, fresh.metadata.token, { _user_id: 'remerge-web', _email: 'grace@example.com' });
    await writeContact(crm.entity.id, crm.metadata.token, { _user_id: 'remerge-crm', _email: 'GRACE@example.com', plan: 'gold' });
    const sources = async () => {
      const res = await get(`/v1/project/${boot.project.uid}/audience/user/remerge-web`, boot.productToken.token);
      return res.status === 200 ? (res.body.entity._datasources as string[]).length : 0;
    };
    // Merged on _user_id only (the default): two audience contacts.
    await waitFor('both contacts merged', async () => (await get(`/v1/project/${boot.project.uid}/audience/user/remerge-crm`, boot.productToken.token)).status === 200 && (await sources()) === 1, { timeoutMs: 30000 });
    await meld('admin', 'patch', `projects/${boot.project.uid}`, '--data', JSON.stringify({ mergingAttributes: ['_email'] }));
    await waitFor('merged again by email', async () => (await sources()) === 2, { timeoutMs: 30000 });
    const contact = await get(`/v1/project/${boot.project.uid}/audience/user/remerge-web`, boot.productToken.token);
    expect(contact.body.entity).toMatchObject({ _email: 'grace@example.com', plan: 'gold' });
    // The operator sees the re-merge finish in the project read.
    await waitFor('re-merge reported done', async () => (await meld('admin', 'get', `projects/${boot.project.uid}`)).metadata.remerge?.status === 'done', { timeoutMs: 10000 });
  });

  it('`meld admin` exits non-zero with the error body on stderr', async () => {
    await expect(meld('admin', 'post', 'organizations', '--data', '{"name":"x","plan":"huge"}')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('"path": "plan"') });
  });

  it('the merged OpenAPI document is complete: every route of the table documented by its own app', async () => {
    const res = await fetch(`${BASE}/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Json;
    expect(doc['x-meld-incomplete']).toBeUndefined();
    for (const route of PUBLIC_ROUTES) {
      const op = doc.paths[route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[route.method.toLowerCase()];
      expect([route.id, Boolean(op)]).toEqual([route.id, true]);
      expect([route.id, op.description ?? '']).not.toEqual([route.id, expect.stringContaining('does not document it yet')]);
    }
    expect(doc.paths['/admin/v1/organizations'].post.security).toEqual([{ admin: [] }]);
    expect((await fetch(`${BASE}/docs`)).status).toBe(200);
  });
});
