import { APP_NAMES, PUBLIC_ROUTES, routeParams } from './index';

describe('public route table', () => {
  it('has unique ids and unique method + path pairs', () => {
    expect(new Set(PUBLIC_ROUTES.map((r) => r.id)).size).toBe(PUBLIC_ROUTES.length);
    expect(new Set(PUBLIC_ROUTES.map((r) => `${r.method} ${r.path}`)).size).toBe(PUBLIC_ROUTES.length);
  });

  it('names real apps, parameters that exist in the path, and ingest routes per data source', () => {
    for (const r of PUBLIC_ROUTES) {
      expect(APP_NAMES).toContain(r.app);
      expect(r.path.startsWith('/v1/')).toBe(true);
      const params = routeParams(r.path);
      if (r.projectParam) expect(params).toContain(r.projectParam);
      if (r.dataSourceParam) expect(params).toContain(r.dataSourceParam);
      if (params.includes('project')) expect(r.projectParam).toBe('project');
      expect(r.rateLimit === 'ingest').toBe(r.path.includes('/stream'));
      if (r.rateLimit === 'ingest') expect(r.dataSourceParam).toBe('datasource');
      if (r.tokenKinds.includes('datasource')) expect(r.dataSourceParam).toBeDefined();
    }
  });

  it('puts GET / and the project read in the large class', () => {
    const large = PUBLIC_ROUTES.filter((r) => r.rateLimit === 'large').map((r) => `${r.method} ${r.path}`);
    expect(large.sort()).toEqual(['GET /v1/', 'GET /v1/project/:project']);
  });
});
