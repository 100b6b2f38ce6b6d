import { errorSummary, INTERNAL_APPS, LoggableError, type AppName } from '@meld/contracts';
import { scanAppDocument } from '@meld/api';
import { Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { loadAppUrls } from '../upstreams/app-urls';
import { toOpenApiSchema } from './openapi-schema';
import { applyRouteTable } from './route-table-operations';
import { securitySchemes } from './security-schemes';
import { TOKEN_INFO_OPERATION, TOKEN_INFO_UNAVAILABLE, TokenInfoSchema } from './token-info.operation';

const CACHE_MS = 60_000;
// An app builds its document when first asked, loading @nestjs/swagger then (ADR 0355): seconds
// on a busy 2-core machine when all seven are asked at once. An app that is down fails at once.
const FETCH_TIMEOUT_MS = 10_000;
/** Paths the public document shows: the product and ingest API, OAuth, and the operator API. */
const PUBLIC_PATH = /^\/(v1\/|oauth\/|\.well-known\/|admin\/v1\/)/;

/**
 * `/v1/openapi.json`: the gateway's own routes (admin API, `GET /v1/`) and every app's
 * `/openapi.json`, filtered to public paths and completed from the route table. A complete
 * document is cached for a minute; when an app cannot be reached the document is served
 * without its paths, marked `x-meld-incomplete`, and not cached.
 */
@Injectable()
export class PublicDocument {
  private readonly log = new Logger('docs');
  private readonly urls = loadAppUrls();
  private cached?: { at: number; doc: OpenAPIObject };

  constructor(
    private readonly modules: ModulesContainer,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  async get(): Promise<OpenAPIObject> {
    if (this.cached && Date.now() - this.cached.at < CACHE_MS) return this.cached.doc;
    const { doc, complete } = await this.build();
    if (complete) this.cached = { at: Date.now(), doc };
    return doc;
  }

  private async build(): Promise<{ doc: OpenAPIObject; complete: boolean }> {
    const own = scanAppDocument(this.modules, this.adapterHost, 'Meld');
    const doc: OpenAPIObject = {
      openapi: '3.0.3',
      info: {
        title: 'Meld API',
        version: '2.0.0',
        description: 'Customer data and messaging. Product and ingest endpoints under `/v1`, operator endpoints under `/admin/v1`. Errors share one shape (`Error`); every `/v1` response carries `X-RateLimit-*`. Bodies of `/v1` and `/admin/v1` requests are JSON (`Content-Type: application/json`; any other type is a 400), at most 256 KiB (1 MiB for ingest writes; 413 above); ingest writes may come with `Content-Encoding: gzip` or `deflate` (1 MiB compressed and once inflated; any other coding is a 415); the request line and headers at most 16 KiB (431 above).',
      },
      servers: [{ url: '/' }],
      paths: {},
      components: { schemas: {}, securitySchemes: securitySchemes() as never },
    };
    const missing: AppName[] = [];
    merge(doc, own);
    for (const [app, appDoc] of await Promise.all(INTERNAL_APPS.map(async (app) => [app, await this.fetchApp(app)] as const))) {
      if (appDoc === 'unavailable') missing.push(app);
      else if (appDoc) merge(doc, appDoc);
    }
    const schemas = doc.components!.schemas as Record<string, unknown>;
    doc.paths['/v1/'] = {
      get: {
        ...TOKEN_INFO_OPERATION,
        responses: { '200': { description: 'the token', content: { 'application/json': { schema: toOpenApiSchema(TokenInfoSchema, schemas) } } }, '503': TOKEN_INFO_UNAVAILABLE },
      },
    };
    applyRouteTable(doc);
    doc.paths = Object.fromEntries(Object.entries(doc.paths).sort(([a], [b]) => a.localeCompare(b)));
    if (missing.length) Object.assign(doc, { 'x-meld-incomplete': missing });
    return { doc, complete: missing.length === 0 };
  }

  /** null: the app documents nothing (no /openapi.json); 'unavailable': it could not be asked. */
  private async fetchApp(app: AppName): Promise<OpenAPIObject | null | 'unavailable'> {
    try {
      const res = await fetch(`${this.urls[app]}/openapi.json`, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      if (res.status === 404) return null;
      if (!res.ok) throw new LoggableError(`HTTP ${res.status}`);
      return (await res.json()) as OpenAPIObject;
    } catch (err) {
      this.log.warn(`${app}: no OpenAPI document (${errorSummary(err)})`);
      return 'unavailable';
    }
  }
}

function merge(into: OpenAPIObject, from: OpenAPIObject): void {
  for (const [path, item] of Object.entries(from.paths ?? {})) {
    if (PUBLIC_PATH.test(path)) into.paths[path] = { ...item, ...into.paths[path] };
  }
  const schemas = into.components!.schemas as Record<string, unknown>;
  for (const [name, schema] of Object.entries(from.components?.schemas ?? {})) schemas[name] ??= schema;
}
