import { createServer, type Server } from 'node:http';
import { INTERNAL_APPS, PRODUCT_SCOPES, PUBLIC_ROUTES, appUrlEnv } from '@meld/contracts';
import { scanAppDocument } from '@meld/api';
import { bootstrapApp, meldAppModule } from '@meld/platform';
import { operationsWithoutPostgres503, PROTOTYPE_NAMES, testEnv } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import { AdminModule } from '../src/admin/admin.module';
import { DocsModule } from '../src/docs/docs.module';
import { openApiPath } from '../src/docs/route-table-operations';
import type { Json } from './admin-support/admin-gateway';

// The merged public document as the gateway assembles it, with stand-in apps: "audience"
// documents one route plus an internal path (to be filtered out), "ingest" cannot be
// reached, the others have no document. The e2e test checks it with the real apps.
const AUDIENCE_DOC = {
  openapi: '3.0.0',
  info: { title: 'stub', version: '0' },
  paths: {
    '/v1/project/{project}': { get: { description: 'from the audience stub', responses: { '200': { description: 'ok' } } } },
    '/internal/thing': { get: { responses: { '200': { description: 'ok' } } } },
  },
  components: { schemas: { StubSchema: { type: 'object' } } },
};

describe('public OpenAPI document and /docs (gateway)', () => {
  const servers: Server[] = [];
  let app: INestApplication;
  let gateway: string;
  let doc: Json;
  const saved = { ...process.env };

  const serve = async (handler: Parameters<typeof createServer>[1]) => {
    const server = createServer(handler).listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((r) => server.once('listening', r));
    return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  };

  beforeAll(async () => {
    const none = await serve((_req, res) => res.writeHead(404).end());
    for (const name of INTERNAL_APPS) process.env[appUrlEnv(name)] = none;
    process.env[appUrlEnv('audience')] = await serve((req, res) =>
      req.url === '/openapi.json' ? res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(AUDIENCE_DOC)) : res.writeHead(404).end(),
    );
    process.env[appUrlEnv('ingest')] = 'http://127.0.0.1:9'; // discard port: connection refused
    const env = testEnv();
    app = await bootstrapApp({
      app: 'gateway-docs-spec',
      module: meldAppModule(
        { name: 'gateway-docs-spec', port: 0, stores: ['postgres', 'redis'], publicFacing: true, imports: [AdminModule, DocsModule] },
        { LOG_LEVEL: 'silent', MELD_ALLOW_DEV_SECRETS: '1', MELD_POSTGRES_URL: env.postgresUrl, MELD_REDIS_URL: env.redisUrl },
      ),
      host: '127.0.0.1',
      port: 0,
    });
    gateway = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const res = await fetch(`${gateway}/v1/openapi.json`);
    expect(res.status).toBe(200);
    doc = await res.json();
  });

  afterAll(async () => {
    process.env = saved;
    await app?.close();
    for (const s of servers) s.close();
  });

  it('says which apps could not be asked, and keeps only public paths of the others', () => {
    expect(doc['x-meld-incomplete']).toEqual(['ingest']);
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info).toMatchObject({ title: 'Meld API', version: '2.0.0' });
    expect(doc.paths['/internal/thing']).toBeUndefined();
    expect(doc.paths['/v1/project/{project}'].get.description).toContain('from the audience stub');
    expect(doc.components.schemas.StubSchema).toBeDefined();
  });

  it('lists every route of the route table with its security and the gateway refusals, stubs for undocumented ones', () => {
    for (const route of PUBLIC_ROUTES) {
      const op = doc.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
      expect([route.id, Boolean(op)]).toEqual([route.id, true]);
      expect(op.security[0]).toEqual({ bearer: [] });
      expect(op.security[1]).toEqual(route.tokenKinds.includes('oauth') ? { oauth2: [...route.scopes] } : undefined);
      // The ingest API refuses with 404 where product routes answer 403 (ADR 0009).
      const refusals = route.dataSourceParam ? ['401', '404', '429'] : ['401', '403', '429'];
      expect([route.id, Object.keys(op.responses)]).toEqual([route.id, expect.arrayContaining(['200', ...refusals])]);
      if (route.dataSourceParam) expect([route.id, op.responses['403']]).toEqual([route.id, undefined]);
      expect(op['x-meld-route']).toMatchObject({ id: route.id, app: route.app, rateLimit: route.rateLimit, scopes: route.scopes });
    }
    const stream = doc.paths['/v1/project/{project}/datasource/{datasource}/stream'].get;
    expect(stream.description).toContain('does not document it yet');
    expect(stream.parameters.map((p: { name: string }) => p.name)).toEqual(['project', 'datasource']);
    expect(doc.paths['/v1/'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TokenInfo' });
    expect(Object.keys(doc.components.schemas.TokenInfo.properties.metadata.properties).sort()).toEqual(['dataMode', 'dataPolicy', 'organization', 'scopes']);
  });

  it('lists every admin route with the admin bearer and its documented body', () => {
    const admin = scanAppDocument(app.get(ModulesContainer), app.get(HttpAdapterHost), 'admin');
    const operations = Object.entries(admin.paths)
      .filter(([p]) => p.startsWith('/admin/v1/'))
      .flatMap(([path, item]) => Object.keys(item).map((method) => [path, method] as const));
    expect(operations.length).toBeGreaterThanOrEqual(19);
    for (const [path, method] of operations) {
      expect([path, method, doc.paths[path]?.[method]?.security]).toEqual([path, method, [{ admin: [] }]]);
      expect(doc.paths[path][method].responses['401']).toBeDefined();
    }
    const body = doc.paths['/admin/v1/organizations'].post.requestBody.content['application/json'].schema;
    expect(doc.components.schemas[body.$ref.split('/').pop()]).toMatchObject({ properties: { plan: { enum: ['s', 'm', 'l', 'xl'] } }, required: ['name', 'plan'] });
  });

  it('lists the 503 with Retry-After on every admin route and on GET /v1/: each reads or writes Postgres but the scope list (ADR 0360)', () => {
    const own: Json = { paths: Object.fromEntries(Object.entries(doc.paths as Json).filter(([p]) => p.startsWith('/admin/v1/') || p === '/v1/')) };
    expect(Object.keys(own.paths).length).toBeGreaterThanOrEqual(15);
    expect(operationsWithoutPostgres503(own, ['GET /admin/v1/scopes'])).toEqual([]);
    expect(doc.paths['/admin/v1/scopes'].get.responses['503']).toBeUndefined();
  });

  it('declares the bearer and OAuth 2 schemes and the error shape; every $ref resolves', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.oauth2).toMatchObject({
      type: 'oauth2',
      flows: { authorizationCode: { tokenUrl: '/oauth/token', authorizationUrl: '/oauth/authorize', scopes: { ACCOUNT_READ: expect.any(String) } } },
    });
    // Only what the OAuth server grants (its `scopes_supported`), and every operation's OAuth scopes among them.
    const oauthScopes = Object.keys(doc.components.securitySchemes.oauth2.flows.authorizationCode.scopes);
    expect(oauthScopes.sort()).toEqual([...PRODUCT_SCOPES].sort());
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, { security?: Array<Record<string, string[]>> }>>)) {
      for (const [method, op] of Object.entries(operations)) {
        const asked = (op.security ?? []).flatMap((s) => s.oauth2 ?? []);
        expect([method, path, asked.filter((s) => !oauthScopes.includes(s))]).toEqual([method, path, []]);
      }
    }
    expect(doc.components.schemas.Error).toMatchObject({ properties: { statusCode: {}, error: {}, message: {} }, required: ['statusCode', 'error', 'message'] });
    expect(doc.components.schemas.Project.required).toEqual(expect.arrayContaining(['id', 'uid', 'generalConfig', 'attributionConfig', 'createdAt']));
    for (const ref of new Set(JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [])) {
      const name = ref.replace(/^"\$ref":"#\/components\/schemas\//, '').replace(/"$/, '');
      expect([ref, Boolean(doc.components.schemas[name])]).toEqual([ref, true]);
    }
  });

  it('serves /docs with swagger-ui from the gateway itself (no CDN)', async () => {
    const page = await fetch(`${gateway}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(html).not.toMatch(/https?:\/\//);
    const bundle = await fetch(`${gateway}/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/javascript/);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    expect(await (await fetch(`${gateway}/docs/assets/init.js`)).text()).toContain("url: '/v1/openapi.json'");
    expect((await fetch(`${gateway}/docs/assets/..%2Fpackage.json`)).status).toBe(404);
  });

  it('answers 404 for asset names of Object.prototype members (ADR 0124)', async () => {
    for (const name of PROTOTYPE_NAMES) {
      const res = await fetch(`${gateway}/docs/assets/${name}`);
      expect([name, res.status]).toEqual([name, 404]);
      expect(((await res.json()) as Json).message).toBe(`no such asset: ${name}`);
    }
  });
});
