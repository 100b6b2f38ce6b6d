/**
 * The monitoring that ships with Meld (k8s/monitoring, ADR 0175): one PodMonitor per app on
 * the port its metrics are on, rules and dashboards that parse, and every metric they name is
 * one the apps really export: a prom-client registration in the source (apps/, libs/) or a
 * default Node metric of collectDefaultMetrics.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { parse, parseAllDocuments } from 'yaml';
import { promqlMetricNames } from './promql-metrics';

const root = resolve(__dirname, '../..');
const dir = join(root, 'k8s/monitoring');
const read = (p: string) => readFileSync(join(root, p), 'utf8');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = any;

type Kind = 'Counter' | 'Gauge' | 'Histogram' | 'Summary';

function sources(under: string): string[] {
  return readdirSync(join(root, under), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.includes('node_modules') && !/(^|\/)dist\//.test(f) && !/\.(integration-|e2e-)?spec\.ts$/.test(f) && !/(^|\/)test\//.test(f))
    .map((f) => join(under, f));
}

/**
 * Metric names registered in the source, with their kind: `new Gauge({ name: 'x'` directly, or a
 * `meld_*` literal in a file that imports prom-client and constructs a single kind of metric
 * (the get-or-create helpers). A file where neither tells the kind fails the test.
 */
function registeredMetrics(): Map<string, Kind> {
  const found = new Map<string, Kind>();
  for (const file of [...sources('apps'), ...sources('libs')]) {
    const text = readFileSync(join(root, file), 'utf8');
    if (!/from 'prom-client'/.test(text)) continue;
    const direct = [...text.matchAll(/new (Counter|Gauge|Histogram|Summary)\b[^(]*\(\{\s*name:\s*'([a-z_:][a-z0-9_:]*)'/g)];
    for (const [, kind, name] of direct) found.set(name, kind as Kind);
    const kinds = new Set([...text.matchAll(/new (Counter|Gauge|Histogram|Summary)\b/g)].map((m) => m[1] as Kind));
    for (const [, name] of text.matchAll(/'(meld_[a-z0-9_]+)'/g)) {
      if (found.has(name)) continue;
      if (kinds.size !== 1) throw new Error(`${file}: cannot tell the kind of metric ${name}; register it as new <Kind>({ name: '${name}', ... })`);
      found.set(name, [...kinds][0]);
    }
  }
  return found;
}

/** What collectDefaultMetrics adds, with the prefix metrics.ts gives it (none today). */
function defaultMetrics(): Map<string, Kind> {
  const metricsTs = read('libs/platform/src/metrics/metrics.ts');
  const prefix = /collectDefaultMetrics\(\{[^}]*prefix:\s*'([^']*)'/.exec(metricsTs)?.[1] ?? '';
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix });
  const kindOf: Record<string, Kind> = { counter: 'Counter', gauge: 'Gauge', histogram: 'Histogram', summary: 'Summary' };
  return new Map(registry.getMetricsAsArray().map((m) => [m.name, kindOf[(m as Obj).type ?? 'gauge'] ?? 'Gauge']));
}

/** Every series name a scrape of the apps yields, plus `up`, which Prometheus adds per target. */
function exportedSeries(): Set<string> {
  const series = new Set<string>(['up']);
  for (const [name, kind] of [...defaultMetrics(), ...registeredMetrics()]) {
    series.add(name);
    if (kind === 'Histogram') for (const s of ['_bucket', '_sum', '_count']) series.add(name + s);
    if (kind === 'Summary') for (const s of ['_sum', '_count']) series.add(name + s);
  }
  return series;
}

const k = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'));
const docs: Obj[] = (k.resources as string[]).flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => {
  if (d.errors.length) throw new Error(`${f}: ${d.errors[0].message}`);
  return d.toJS();
}));
const rules: Obj[] = docs.filter((d) => d.kind === 'PrometheusRule').flatMap((r) => r.spec.groups.flatMap((g: Obj) => g.rules));
const dashboardFiles: string[] = (k.configMapGenerator as Obj[]).flatMap((g) => g.files);
const dashboards = dashboardFiles.map((f) => ({ file: f, json: JSON.parse(readFileSync(join(dir, f), 'utf8')) }));
/** Every PromQL expression of a dashboard: panel targets and templating queries. */
const dashboardExprs = (d: Obj): string[] => [
  ...(d.panels ?? []).flatMap((p: Obj) => (p.targets ?? []).map((t: Obj) => t.expr)),
  ...(d.templating?.list ?? []).filter((v: Obj) => v.type === 'query').map((v: Obj) => (typeof v.query === 'string' ? v.query : v.query.query)),
];

describe('exported metrics (what the checks below compare with)', () => {
  it('finds the registrations of every lib and app metric, and the default Node metrics', () => {
    const series = exportedSeries();
    for (const name of ['meld_http_request_duration_seconds_bucket', 'meld_http_server_errors_total', 'meld_kafka_consumer_lag', 'meld_outbox_lag_seconds', 'meld_readiness_check_up', 'meld_merge_step_seconds_count', 'process_cpu_seconds_total', 'nodejs_heap_size_used_bytes']) {
      expect([name, series.has(name)]).toEqual([name, true]);
    }
    expect(series.has('meld_kafka_consumer_lag_bucket')).toBe(false); // a gauge has no buckets
  });
});

describe('k8s/monitoring', () => {
  const apps = JSON.parse(read('libs/contracts/src/apps.json')) as Record<string, { port: number }>;

  it('lists every file in the folder', () => {
    const onDisk = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /\.(ya?ml|json)$/.test(f) && f !== 'kustomization.yaml').sort();
    expect([...k.resources, ...dashboardFiles].sort()).toEqual(onDisk);
  });

  it.each(Object.keys(apps))('%s: a PodMonitor scrapes /metrics on the port its metrics are on', (app) => {
    const pm = docs.find((d) => d.kind === 'PodMonitor' && d.spec.selector.matchLabels['app.kubernetes.io/name'] === app);
    expect(pm?.apiVersion).toBe('monitoring.coreos.com/v1');
    // The gateway's metrics are on its operations port (ADR 0105); the others' on their own.
    const port = app === 'gateway' ? 'ops' : 'http';
    expect(pm.spec.podMetricsEndpoints).toEqual([expect.objectContaining({ port, path: '/metrics' })]);
    const deployment = parseAllDocuments(read(`k8s/base/apps/${app}.yaml`)).map((d) => d.toJS()).find((d) => d.kind === 'Deployment');
    expect(deployment.spec.template.spec.containers[0].ports.map((p: Obj) => p.name)).toContain(port);
  });

  it('has the alerts an operator needs: lag, outbox age, dead letters, 5xx rate, p99 per route, store down', () => {
    const named = (metric: string) => rules.filter((r) => promqlMetricNames(r.expr).includes(metric)).map((r) => r.alert);
    expect(named('meld_kafka_consumer_lag').length).toBeGreaterThan(0);
    expect(named('meld_outbox_lag_seconds').length).toBeGreaterThan(0);
    expect(named('meld_kafka_messages_dead_lettered_total').length).toBeGreaterThan(0);
    expect(named('meld_http_server_errors_total').length).toBeGreaterThan(0);
    expect(rules.some((r) => /histogram_quantile\(0\.99,.*by \([^)]*route[^)]*\).*meld_http_request_duration_seconds_bucket/.test(r.expr))).toBe(true);
    expect(named('meld_readiness_check_up').length).toBeGreaterThan(0);
  });

  it.each(rules.map((r) => [r.alert, r]))('rule %s is complete and names only exported metrics', (_alert, r) => {
    expect(r.alert).toMatch(/^Meld[A-Za-z0-9]+$/);
    expect(['warning', 'critical']).toContain(r.labels?.severity);
    expect(r.annotations?.summary).toBeTruthy();
    expect(r.annotations?.description).toBeTruthy();
    if (r.for !== undefined) expect(r.for).toMatch(/^\d+[smh]$/);
    const names = promqlMetricNames(r.expr);
    expect(names.length).toBeGreaterThan(0);
    const series = exportedSeries();
    expect(names.filter((n) => !series.has(n))).toEqual([]);
  });

  it('rule names are unique', () => {
    const names = rules.map((r) => r.alert);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it.each(dashboards.map((d) => [d.file, d.json]))('dashboard %s parses, and each query names only exported metrics', (_file, d) => {
    expect(d.title).toMatch(/^Meld: /);
    expect(d.uid).toMatch(/^meld-[a-z-]+$/);
    const exprs = dashboardExprs(d);
    expect(exprs.length).toBeGreaterThan(0);
    const series = exportedSeries();
    for (const e of exprs) {
      const names = promqlMetricNames(e);
      expect([e, names.length > 0]).toEqual([e, true]);
      expect([e, names.filter((n) => !series.has(n))]).toEqual([e, []]);
    }
    const ids = (d.panels as Obj[]).map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has a dashboard per area: ingest and merge, queries and probes, messaging', () => {
    expect(dashboards.map((d) => d.json.title).sort()).toEqual(['Meld: ingest and merge', 'Meld: messaging', 'Meld: queries and probes']);
    expect(new Set(dashboards.map((d) => d.json.uid)).size).toBe(3);
  });

  it('is documented in docs/deploy.md', () => {
    expect(read('docs/deploy.md')).toContain('kubectl apply -k k8s/monitoring');
    expect(existsSync(join(root, 'docs/adr/0175-monitoring-ships-with-meld.md'))).toBe(true);
    expect(relative(root, dir)).toBe('k8s/monitoring');
  });
});
