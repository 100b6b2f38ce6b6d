/**
 * Static checks of the deployment files: Dockerfile, docker-compose.yml and k8s/ (kustomize
 * base and overlays). No Docker engine or cluster is needed: the files are parsed and
 * cross-checked against the apps that exist in the repo. When `kubectl` is on the PATH, the
 * base and every overlay are also rendered with `kubectl kustomize`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { principalKeyEnv } from '@meld/auth';

const root = resolve(__dirname, '../..');
const read = (p: string) => readFileSync(join(root, p), 'utf8');

// ------------------------------------------------------------------ what must be deployed

const FALLBACK_APPS = ['gateway', 'ingest', 'identity-merge', 'audience', 'probes', 'messaging', 'readiness', 'oauth'];

/** Apps = `apps/<name>/project.json` with projectType application; the fixed eight before any exists. */
function appNames(): string[] {
  const dir = join(root, 'apps');
  const found = existsSync(dir)
    ? readdirSync(dir).filter((name) => {
        const project = join(dir, name, 'project.json');
        if (!existsSync(project)) return false;
        return JSON.parse(readFileSync(project, 'utf8')).projectType === 'application';
      })
    : [];
  return found.length > 0 ? found.sort() : FALLBACK_APPS;
}

type Store = 'postgres' | 'redis' | 'clickhouse' | 'kafka';
interface AppInfo {
  port: number;
  stores: Store[];
}

// Same table as libs/contracts/src/apps.json (read from there when it exists).
const FALLBACK_INFO: Record<string, AppInfo> = {
  gateway: { port: 8080, stores: ['postgres', 'redis'] },
  ingest: { port: 8081, stores: ['postgres', 'kafka'] },
  'identity-merge': { port: 8082, stores: ['postgres', 'kafka'] },
  audience: { port: 8083, stores: ['postgres', 'clickhouse'] },
  probes: { port: 8084, stores: ['clickhouse', 'redis', 'kafka'] },
  messaging: { port: 8085, stores: ['postgres', 'redis', 'kafka'] },
  readiness: { port: 8086, stores: ['postgres'] },
  oauth: { port: 8087, stores: ['postgres'] },
};

function appInfo(): Record<string, AppInfo> {
  const p = join(root, 'libs/contracts/src/apps.json');
  return existsSync(p) ? { ...FALLBACK_INFO, ...JSON.parse(readFileSync(p, 'utf8')) } : FALLBACK_INFO;
}

function partitions(): number {
  const p = join(root, 'libs/contracts/src/topics.json');
  return existsSync(p) ? JSON.parse(readFileSync(p, 'utf8')).partitions : 8;
}

const APPS = appNames();
const INFO = appInfo();
const info = (app: string): AppInfo => {
  const i = INFO[app];
  if (!i) throw new Error(`no port/stores known for app "${app}": add it to libs/contracts/src/apps.json`);
  return i;
};
const livenessPath = (app: string) => (app === 'gateway' ? '/livez' : '/healthz');
const HPA_APPS = ['ingest', 'probes', 'identity-merge', 'messaging'];
const CONSUMERS = ['identity-merge', 'probes', 'messaging'];
/** Secret keys (URLs that may carry credentials) per store; Kafka brokers come from the ConfigMap. */
const STORE_SECRET: Record<Store, string | undefined> = {
  postgres: 'MELD_POSTGRES_URL',
  redis: 'MELD_REDIS_URL',
  clickhouse: 'MELD_CLICKHOUSE_URL',
  kafka: undefined,
};
const SENSITIVE = ['MELD_POSTGRES_URL', 'MELD_REDIS_URL', 'MELD_CLICKHOUSE_URL', 'MELD_ADMIN_TOKEN', 'MELD_PRINCIPAL_MASTER_KEY', ...APPS.filter((a) => a !== 'gateway').map(principalKeyEnv)];
/** Values anyone can read in this repository (ADR 0101): no deployment file may carry them. */
const PUBLIC_SECRETS = /meld-dev-admin|meld-test-admin|meld-dev-principal-secret|meld-test-principal-secret/;

// ------------------------------------------------------------------ helpers

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = any;

function yamlDocs(file: string): Obj[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((d) => {
    if (d.errors.length) throw new Error(`${relative(root, file)}: ${d.errors[0].message}`);
    return d.toJS();
  }).filter((d) => d != null);
}

function yamlFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...yamlFilesUnder(p));
    else if (/\.ya?ml$/.test(e) && !/^kustomization\.ya?ml$/.test(e)) out.push(p);
  }
  return out;
}

interface Kustomization {
  dir: string;
  k: Obj;
  /** Resource entries that are files (not directories or remote bases), resolved. */
  files: string[];
}

function kustomization(dir: string): Kustomization {
  const k = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'));
  const files = ((k.resources ?? []) as string[]).map((r) => resolve(dir, r)).filter((p) => !existsSync(p) || !statSync(p).isDirectory());
  return { dir, k, files };
}

/** TypeScript sources (no tests) under a folder. */
function sourceFilesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !/\.(integration-|e2e-)?spec\.ts$/.test(f))
    .map((f) => join(dir, f));
}

const container = (d: Obj) => d.spec.template.spec.containers[0];
const envOf = (c: Obj): Record<string, Obj> => Object.fromEntries((c.env ?? []).map((e: Obj) => [e.name, e]));

// ------------------------------------------------------------------ Dockerfile

describe('Dockerfile', () => {
  const text = read('Dockerfile');
  const stages = [...text.matchAll(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/gim)].map((m) => ({ image: m[1], name: m[2] }));
  const runtimeStart = text.lastIndexOf('\nFROM ');
  const runtime = text.slice(runtimeStart);

  it('is multi-stage: npm ci, build, production-only deps', () => {
    expect(stages.length).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(/npm ci\b/);
    expect(text).toMatch(/npm run build|node tools\/build\.mjs/);
    expect(text).toMatch(/npm ci[^\n]*--omit=dev/);
  });

  it('runs on node:20-slim as a non-root numeric user, with a HEALTHCHECK', () => {
    const last = stages[stages.length - 1].image;
    const nodeImage = text.match(/^ARG NODE_IMAGE=(\S+)/m)?.[1];
    expect(last === 'node:20-slim' || (last === '${NODE_IMAGE}' && nodeImage === 'node:20-slim')).toBe(true);
    const user = runtime.match(/^USER\s+(\S+)/m)?.[1];
    expect(user).toBeDefined();
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(user!.split(':')[0]).not.toBe('0');
    expect(runtime).toMatch(/^HEALTHCHECK /m);
    expect(runtime).not.toMatch(/^COPY --from=deps /m); // dev dependencies never reach the runtime
  });

  it('selects the app with ARG APP and runs apps/<app>/dist/main.js', () => {
    expect(runtime).toMatch(/^ARG APP\b/m);
    expect(runtime).toMatch(/^ENV MELD_APP=\$\{APP\}/m);
    expect(runtime).toMatch(/apps\/\$\{MELD_APP\}\/dist\/main\.js/);
  });

  it('has a .dockerignore keeping host build output out of the context', () => {
    const ignore = read('.dockerignore').split('\n').map((l) => l.trim());
    expect(ignore).toEqual(expect.arrayContaining(['**/node_modules', '**/dist', '.git', '.stack']));
  });
});

// ------------------------------------------------------------------ docker compose

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true });
  const services: Record<string, Obj> = compose.services;
  const dependsOn = (name: string): Record<string, string> => {
    const d = services[name].depends_on ?? {};
    return Array.isArray(d) ? Object.fromEntries(d.map((s: string) => [s, 'service_started'])) : Object.fromEntries(Object.entries(d).map(([k, v]) => [k, (v as Obj).condition]));
  };

  /** The one service that builds the Meld image; every other Meld service runs what it tags. */
  const builders = Object.entries(services).filter(([, s]) => s.build);
  const meldImage = builders[0]?.[1].image;

  it('builds one Meld image, once, from the Dockerfile, and never pulls it', () => {
    expect(builders.map(([name]) => name)).toEqual(['migrate']);
    const [, b] = builders[0];
    expect(b.build.context).toBe('.');
    expect(b.build.dockerfile ?? 'Dockerfile').toBe('Dockerfile');
    expect(b.build.args).toBeUndefined(); // the app is picked at run time (MELD_APP), not at build time
    expect(meldImage).toMatch(/^meld:/);
    for (const name of [...APPS, 'topics', 'smsc']) expect([name, services[name].image, services[name].pull_policy]).toEqual([name, meldImage, 'never']);
  });

  it.each(APPS)('%s: runs the Meld image with its MELD_APP, healthchecked, after migrate and its stores', (app) => {
    const s = services[app];
    expect(s).toBeDefined();
    expect(s.build).toBeUndefined();
    expect(s.image).toBe(meldImage);
    expect(s.environment.MELD_APP).toBe(app);
    expect(s.healthcheck?.test).toBeDefined();
    expect(s.healthcheck.disable).not.toBe(true);
    expect(JSON.stringify(s.healthcheck.test)).toContain(`:${info(app).port}/readyz`);
    const port = app === 'gateway' ? s.environment.MELD_PORT : s.environment.PORT;
    expect(String(port)).toBe(String(info(app).port));
    expect(s.environment.MELD_HOST).toBe('0.0.0.0');
    const deps = dependsOn(app);
    expect(deps.migrate).toBe('service_completed_successfully');
    for (const store of info(app).stores) expect(deps[store]).toBe('service_healthy');
    if (info(app).stores.includes('kafka')) expect(deps.topics).toBe('service_completed_successfully');
  });

  it('carries no known secret: the admin token and principal keys must come from the deployment (.env)', () => {
    expect(read('docker-compose.yml')).not.toMatch(PUBLIC_SECRETS);
    expect(services.gateway.environment.MELD_ADMIN_TOKEN).toMatch(/^\$\{MELD_ADMIN_TOKEN:\?.+\}$/);
    expect(services.gateway.environment.MELD_PRINCIPAL_MASTER_KEY).toMatch(/^\$\{MELD_PRINCIPAL_MASTER_KEY:\?.+\}$/);
    // Only the gateway can sign principals for every app or use the admin API; each app has its own key only (ADR 0256).
    for (const app of APPS.filter((a) => a !== 'gateway')) {
      const env = services[app].environment;
      const keys = Object.keys(env).filter((name) => name.startsWith('MELD_PRINCIPAL_'));
      expect([app, keys, env.MELD_ADMIN_TOKEN]).toEqual([app, [principalKeyEnv(app)], undefined]);
      expect(env[principalKeyEnv(app)]).toMatch(new RegExp(`^\\$\\{${principalKeyEnv(app)}:\\?.+\\}$`));
    }
  });

  it('runs every Meld container as the pods do: image user, read-only root, /tmp on tmpfs, no capabilities, no new privileges', () => {
    // Compose runs Meld in production on one host (ADR 0326): the same restrictions as k8s/base's securityContext.
    const meld = Object.entries(services).filter(([, s]) => s.image === meldImage).map(([name]) => name);
    expect(meld).toEqual(expect.arrayContaining([...APPS, 'messaging-delivery', 'migrate', 'topics', 'smsc']));
    for (const name of meld) {
      const s = services[name];
      const tmpfs = ([] as string[]).concat(s.tmpfs ?? []).map((t) => t.split(':')[0]);
      expect([name, s.user, s.read_only, tmpfs, s.cap_drop, s.security_opt, s.privileged]).toEqual([name, undefined, true, ['/tmp'], ['ALL'], ['no-new-privileges:true'], undefined]);
    }
  });

  it('gives every app as long to stop as its pods get (terminationGracePeriodSeconds), not Docker’s 10 s', () => {
    // An audience read may run 12 s (ADR 0114) and a delivery job killed mid-submit can send an SMS twice (ADR 0268).
    const seconds = (v: string | undefined) => {
      const m = /^(\d+)s$/.exec(v ?? '10s');
      if (!m) throw new Error(`stop_grace_period not understood: ${v}`);
      return Number(m[1]);
    };
    const pods = new Map<string, number>();
    for (const file of kustomization(join(root, 'k8s/base')).files.filter(existsSync)) {
      for (const d of yamlDocs(file)) if (d.kind === 'Deployment') pods.set(d.metadata.name, d.spec.template.spec.terminationGracePeriodSeconds ?? 30);
    }
    for (const name of [...APPS, 'messaging-delivery']) expect([name, seconds(services[name].stop_grace_period)]).toEqual([name, pods.get(name)]);
  });

  it('gateway finds every app at its compose URL', () => {
    for (const app of APPS.filter((a) => a !== 'gateway')) {
      const env = `MELD_${app.toUpperCase().replace(/-/g, '_')}_URL`;
      expect(services.gateway.environment[env]).toBe(`http://${app}:${info(app).port}`);
    }
  });

  it('messaging runs as its api and delivery roles, as on Kubernetes (ADRs 0253, 0326); only delivery waits for the SMSC simulator', () => {
    if (!APPS.includes('messaging')) return;
    const [api, delivery] = [services.messaging, services['messaging-delivery']];
    expect(api.environment.MELD_MESSAGING_ROLE).toBe('api');
    expect(dependsOn('messaging').smsc).toBeUndefined();
    expect(delivery).toBeDefined();
    expect([delivery.image, delivery.pull_policy, delivery.build]).toEqual([meldImage, 'never', undefined]);
    expect(delivery.environment.MELD_APP).toBe('messaging');
    expect(delivery.environment.MELD_MESSAGING_ROLE).toBe('delivery');
    expect(delivery.ports).toBeUndefined();
    // The same app, so the same key only (ADR 0256), from the deployment's .env.
    const keys = Object.keys(delivery.environment).filter((name) => name.startsWith('MELD_PRINCIPAL_') || name === 'MELD_ADMIN_TOKEN');
    expect(keys).toEqual([principalKeyEnv('messaging')]);
    expect(delivery.environment[principalKeyEnv('messaging')]).toBe(api.environment[principalKeyEnv('messaging')]);
    expect(JSON.stringify(delivery.healthcheck.test)).toContain(`:${delivery.environment.PORT}/readyz`);
    expect(dependsOn('messaging-delivery')).toEqual({
      migrate: 'service_completed_successfully', topics: 'service_completed_successfully',
      postgres: 'service_healthy', redis: 'service_healthy', kafka: 'service_healthy', smsc: 'service_healthy',
    });
    expect(delivery.stop_grace_period).toBe(api.stop_grace_period);
    expect(services.smsc.command.join(' ')).toMatch(/tools\/smsc\/server\.js --port 2775 --host 0\.0\.0\.0/);
  });

  it('publishes only the gateway, on 8080', () => {
    const published = Object.entries(services).filter(([, s]) => s.ports?.length).map(([n]) => n);
    expect(published).toEqual(['gateway']);
    expect(services.gateway.ports.map(String).some((p: string) => /(^|:)8080:8080$/.test(p))).toBe(true);
  });

  it('runs Kafka in KRaft mode (apache/kafka, no ZooKeeper)', () => {
    expect(services.kafka.image).toMatch(/^apache\/kafka:/);
    expect(services.kafka.environment.KAFKA_PROCESS_ROLES).toMatch(/controller/);
    expect(services.kafka.environment.KAFKA_CONTROLLER_QUORUM_VOTERS).toBeDefined();
    expect(JSON.stringify(compose)).not.toMatch(/zookeeper/i); // parsed: comments may say "no ZooKeeper"
    expect(Object.keys(services).some((n) => /zoo/i.test(n))).toBe(false);
  });

  it('has the stores with healthchecks: ClickHouse, PostgreSQL 16, Redis 7 with AOF', () => {
    expect(services.clickhouse.image).toMatch(/^clickhouse\/clickhouse-server:/);
    expect(services.postgres.image).toMatch(/^postgres:16/);
    expect(services.redis.image).toMatch(/^redis:7/);
    expect(services.redis.command.join(' ')).toMatch(/--appendonly yes/);
    for (const s of ['postgres', 'redis', 'clickhouse', 'kafka', 'smsc']) expect(services[s].healthcheck?.test).toBeDefined();
  });

  it('has one-shot migrate and topics jobs from the same image', () => {
    expect(services.migrate.command.join(' ')).toBe('node tools/cli/meld.js migrate');
    expect(services.topics.command.join(' ')).toBe('node tools/cli/meld.js topics');
    for (const job of ['migrate', 'topics']) {
      expect(services[job].image).toBe(meldImage);
      expect(services[job].restart).toBe('no');
    }
    expect(dependsOn('migrate')).toEqual({ postgres: 'service_healthy', clickhouse: 'service_healthy' });
    expect(dependsOn('topics')).toEqual({ kafka: 'service_healthy' });
  });
});

// ------------------------------------------------------------------ Kubernetes

describe('k8s', () => {
  const baseDir = join(root, 'k8s/base');
  const base = kustomization(baseDir);
  const docs = base.files.filter(existsSync).flatMap(yamlDocs);
  const byKind = (kind: string) => docs.filter((d) => d.kind === kind);
  const named = (kind: string, name: string) => byKind(kind).find((d) => d.metadata.name === name);

  it('base kustomization lists every resource file under k8s/base, and each listed file exists', () => {
    const onDisk = yamlFilesUnder(baseDir).map((p) => relative(baseDir, p)).sort();
    const listed = base.files.map((p) => relative(baseDir, p)).sort();
    expect(listed.filter((f) => !existsSync(join(baseDir, f)))).toEqual([]);
    expect(listed).toEqual(onDisk);
  });

  it('commits no Secret (only references to one)', () => {
    expect(byKind('Secret')).toEqual([]);
    expect(base.k.secretGenerator).toBeUndefined();
  });

  it('every Deployment, extra roles included (messaging-delivery), reads its app’s own principal key from the Secret', () => {
    for (const dep of byKind('Deployment')) {
      const env = envOf(container(dep));
      const app = env.MELD_APP?.value as string;
      const want = app === 'gateway' ? 'MELD_PRINCIPAL_MASTER_KEY' : principalKeyEnv(app);
      const keys = Object.keys(env).filter((name) => name.startsWith('MELD_PRINCIPAL_'));
      expect([dep.metadata.name, keys]).toEqual([dep.metadata.name, [want]]);
      expect([dep.metadata.name, env[want]?.valueFrom?.secretKeyRef]).toEqual([dep.metadata.name, { name: 'meld-secrets', key: want }]);
    }
  });

  describe.each(APPS)('%s', (app) => {
    const d = () => named('Deployment', app);

    it('has a Deployment running its app from the shared image', () => {
      expect(d()).toBeDefined();
      const c = container(d());
      expect(envOf(c).MELD_APP?.value).toBe(app);
      const portEnv = app === 'gateway' ? 'MELD_PORT' : 'PORT';
      expect(envOf(c)[portEnv]?.value).toBe(String(info(app).port));
      expect(c.ports.map((p: Obj) => p.containerPort)).toContain(info(app).port);
    });

    it(`probes liveness on ${livenessPath(app)} and readiness on /readyz`, () => {
      const c = container(d());
      expect(c.livenessProbe.httpGet.path).toBe(livenessPath(app));
      expect(c.readinessProbe.httpGet.path).toBe('/readyz');
      if (c.startupProbe) expect(c.startupProbe.httpGet.path).toBe(livenessPath(app));
    });

    it('sets resource requests and limits (cpu and memory)', () => {
      const r = container(d()).resources;
      for (const kind of ['requests', 'limits']) {
        expect(r?.[kind]?.cpu).toBeDefined();
        expect(r?.[kind]?.memory).toBeDefined();
      }
    });

    it('runs non-root, with config from the ConfigMap and secrets by secretKeyRef', () => {
      const spec = d().spec.template.spec;
      expect(spec.securityContext.runAsNonRoot).toBe(true);
      expect(spec.securityContext.runAsUser).toBeGreaterThan(0);
      const c = container(d());
      expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
      expect(c.envFrom.map((e: Obj) => e.configMapRef?.name)).toContain('meld-config');
      const env = envOf(c);
      const needed = [...info(app).stores.map((s) => STORE_SECRET[s]).filter(Boolean)] as string[];
      if (app === 'gateway') needed.push('MELD_ADMIN_TOKEN', 'MELD_PRINCIPAL_MASTER_KEY');
      else needed.push(principalKeyEnv(app));
      // The master key and the admin token stay in the gateway; an app gets its own principal key, no other (ADR 0256).
      const principalKeys = Object.keys(env).filter((name) => name.startsWith('MELD_PRINCIPAL_'));
      expect(principalKeys).toEqual(app === 'gateway' ? ['MELD_PRINCIPAL_MASTER_KEY'] : [principalKeyEnv(app)]);
      if (app !== 'gateway') expect(env.MELD_ADMIN_TOKEN).toBeUndefined();
      for (const key of needed) expect(env[key]?.valueFrom?.secretKeyRef).toEqual({ name: 'meld-secrets', key });
      for (const key of SENSITIVE) expect(env[key]?.value).toBeUndefined(); // never a literal in the manifest
    });

    it('gives consumers time to drain on shutdown', () => {
      const grace = d().spec.template.spec.terminationGracePeriodSeconds;
      expect(grace).toBeGreaterThanOrEqual(CONSUMERS.includes(app) ? 60 : 30);
    });

    it('has a Service selecting its pods on its port', () => {
      const s = named('Service', app);
      expect(s).toBeDefined();
      const podLabels = d().spec.template.metadata.labels;
      for (const [k, v] of Object.entries(s.spec.selector)) expect(podLabels[k]).toBe(v);
      expect(s.spec.ports.map((p: Obj) => p.port)).toContain(info(app).port);
    });
  });

  it.each(HPA_APPS.filter((a) => APPS.includes(a)))('%s has an autoscaling/v2 HPA on its Deployment', (app) => {
    const hpa = byKind('HorizontalPodAutoscaler').find((h) => h.spec.scaleTargetRef.name === app);
    expect(hpa).toBeDefined();
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' });
    expect(named('Deployment', app)).toBeDefined();
    expect(hpa.spec.minReplicas).toBeLessThanOrEqual(hpa.spec.maxReplicas);
    if (CONSUMERS.includes(app)) expect(hpa.spec.maxReplicas).toBeLessThanOrEqual(partitions());
    // The HPA owns the replica count.
    expect(named('Deployment', app).spec.replicas).toBeUndefined();
  });

  it('every HPA targets an existing Deployment', () => {
    for (const hpa of byKind('HorizontalPodAutoscaler')) expect(named('Deployment', hpa.spec.scaleTargetRef.name)).toBeDefined();
  });

  it('has a PodDisruptionBudget for the gateway', () => {
    const pdb = byKind('PodDisruptionBudget').find((p) => p.spec.selector.matchLabels['app.kubernetes.io/name'] === 'gateway');
    expect(pdb).toBeDefined();
    expect(pdb.apiVersion).toBe('policy/v1');
  });

  it('has migrate and topics Jobs running the meld CLI from the shared image', () => {
    for (const job of ['migrate', 'topics']) {
      const j = named('Job', job);
      expect(j).toBeDefined();
      const c = container(j);
      expect([...(c.command ?? []), ...(c.args ?? [])].join(' ')).toBe(`node tools/cli/meld.js ${job}`);
      expect(c.command).toBeUndefined(); // keep the image's tini entrypoint
      expect(j.spec.template.spec.restartPolicy).toMatch(/^(Never|OnFailure)$/);
    }
  });

  const overlays = readdirSync(join(root, 'k8s/overlays')).filter((o) => existsSync(join(root, 'k8s/overlays', o, 'kustomization.yaml')));

  it('has local and production overlays', () => {
    expect(overlays).toEqual(expect.arrayContaining(['local', 'production']));
  });

  describe.each(overlays)('overlay %s', (overlay) => {
    const dir = join(root, 'k8s/overlays', overlay);
    const o = kustomization(dir);

    it('references the base (or another overlay), and every file it names exists', () => {
      const parents = ((o.k.resources ?? []) as string[]).filter((r) => r === '../../base' || (/^\.\.\/[\w-]+$/.test(r) && overlays.includes(r.slice(3))));
      expect(parents).toHaveLength(1);
      expect(existsSync(resolve(dir, '../../base/kustomization.yaml'))).toBe(true);
      const named = [...o.files, ...((o.k.patches ?? []) as Obj[]).filter((p) => p.path).map((p) => resolve(dir, p.path))];
      expect(named.filter((f) => !existsSync(f)).map((f) => relative(root, f))).toEqual([]);
    });

    it('sets the store endpoints that are not secrets (or inherits them from its overlay)', () => {
      if (!o.k.resources.includes('../../base')) return;
      const merged = (o.k.configMapGenerator ?? []).find((g: Obj) => g.name === 'meld-config');
      const keys = (merged?.literals ?? []).map((l: string) => l.split('=')[0]);
      expect(keys).toEqual(expect.arrayContaining(['MELD_KAFKA_BROKERS', 'MELD_SMSC_URL']));
    });

    it('every overlay-own resource file is listed', () => {
      const own = yamlFilesUnder(dir).filter((p) => !((o.k.patches ?? []) as Obj[]).some((pt) => pt.path && resolve(dir, pt.path) === p));
      expect(own.map((p) => relative(dir, p)).sort()).toEqual(o.files.filter((f) => dirname(f).startsWith(dir)).map((p) => relative(dir, p)).sort());
    });
  });

  it('lets only the gateway (and Prometheus) reach each internal app, on its port', () => {
    const policies = byKind('NetworkPolicy');
    for (const app of APPS.filter((a) => a !== 'gateway')) {
      const p = policies.find((d) => d.spec.podSelector.matchLabels?.['app.kubernetes.io/name'] === app);
      expect([app, p?.spec.policyTypes]).toEqual([app, ['Ingress']]);
      const rules = p.spec.ingress as Obj[];
      expect(rules.every((r) => r.ports.length === 1 && r.ports[0].port === info(app).port && r.ports[0].protocol === 'TCP')).toBe(true);
      const peers = rules.flatMap((r) => r.from);
      expect(peers.filter((f: Obj) => f.podSelector)).toEqual([{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gateway' } } }]);
      // Anything else is a namespace selector for the scraper, never an open peer.
      expect(peers.every((f: Obj) => f.podSelector || (f.namespaceSelector?.matchLabels && !f.podSelector && !f.ipBlock))).toBe(true);
    }
  });

  it("keeps the gateway's operations port (metrics, detailed health) off the Service and to the scraper", () => {
    const gw = byKind('Deployment').find((d) => d.metadata.name === 'gateway');
    const c = gw.spec.template.spec.containers[0];
    expect(c.ports).toEqual(expect.arrayContaining([{ name: 'ops', containerPort: 8180 }]));
    expect(c.env).toEqual(expect.arrayContaining([{ name: 'MELD_OPS_PORT', value: '8180' }]));
    expect(gw.spec.template.metadata.annotations['prometheus.io/port']).toBe('8180');
    const svc = byKind('Service').find((d) => d.metadata.name === 'gateway');
    expect(svc.spec.ports.map((p: Obj) => p.port)).toEqual([8080]);
    const policy = byKind('NetworkPolicy').find((d) => d.spec.podSelector.matchLabels?.['app.kubernetes.io/name'] === 'gateway');
    const ops = (policy.spec.ingress as Obj[]).filter((r) => r.ports.some((p: Obj) => p.port === 8180));
    expect(ops.map((r) => r.from)).toEqual([[{ namespaceSelector: { matchLabels: { 'meld.io/monitoring': 'true' } } }]]);
  });

  it('no overlay carries a known secret', () => {
    for (const dir of ['k8s/base', 'k8s/overlays/local', 'k8s/overlays/production']) {
      for (const file of [join(root, dir, 'kustomization.yaml'), ...yamlFilesUnder(join(root, dir))]) expect([relative(root, file), readFileSync(file, 'utf8')]).not.toEqual([relative(root, file), expect.stringMatching(PUBLIC_SECRETS)]);
    }
    const local = kustomization(join(root, 'k8s/overlays/local')).k.secretGenerator[0];
    expect(local.envs).toEqual(['secrets.env']);
    expect((local.literals ?? []).map((l: string) => l.split('=')[0])).toEqual(['MELD_POSTGRES_URL', 'MELD_REDIS_URL', 'MELD_CLICKHOUSE_URL']);
  });

  it('production commits no Secret values', () => {
    const p = kustomization(join(root, 'k8s/overlays/production'));
    expect(p.k.secretGenerator).toBeUndefined();
    expect(p.files.filter(existsSync).flatMap(yamlDocs).filter((d) => d.kind === 'Secret')).toEqual([]);
  });

  const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
  const dirs = ['k8s/base', ...overlays.map((o) => `k8s/overlays/${o}`)];
  const renderedCache = new Map<string, { status: number | null; stderr: string; docs: Obj[] }>();
  /** `kubectl kustomize dir`, once per dir. */
  function render(dir: string) {
    const cached = renderedCache.get(dir);
    if (cached) return cached;
    // The local overlay reads this cluster's secrets from a git-ignored file (`meld keys`).
    const secrets = join(root, 'k8s/overlays/local/secrets.env');
    const made = !existsSync(secrets);
    if (made) writeFileSync(secrets, spawnSync(process.execPath, [join(root, 'tools/cli/meld.js'), 'keys'], { encoding: 'utf8' }).stdout);
    let r;
    try {
      r = spawnSync('kubectl', ['kustomize', join(root, dir)], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    } finally {
      if (made) rmSync(secrets);
    }
    const out = { status: r.status, stderr: r.stderr, docs: r.status === 0 ? parseAllDocuments(r.stdout).map((d) => d.toJS()).filter((d) => d != null) : [] };
    renderedCache.set(dir, out);
    return out;
  }
  const whenRendered = kubectl ? it.each(dirs) : it.skip.each(['(kubectl not installed)']);
  const podSpecs = (docs: Obj[]) => docs.filter((d) => d.kind === 'Deployment' || d.kind === 'Job').map((d) => ({ name: `${d.kind}/${d.metadata.name}`, spec: d.spec.template.spec }));

  /** Bytes of a Kubernetes memory quantity (Mi, Gi, M, G, plain). */
  function bytes(q: string): number {
    const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(String(q));
    if (!m) throw new Error(`memory quantity not understood: ${q}`);
    const unit: Record<string, number> = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, K: 1e3, M: 1e6, G: 1e9 };
    return Number(m[1]) * (m[2] ? unit[m[2]] : 1);
  }

  /** Every container of the Meld image (node) sizes its V8 heap to about 75% of its memory limit (ADR 0172). */
  function heapProblems(docs: Obj[]): string[] {
    const problems: string[] = [];
    for (const { name, spec } of podSpecs(docs)) {
      for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
        if (!/(^|\/)meld([:@]|$)/.test(c.image)) continue; // stores run their own images
        const limit = c.resources?.limits?.memory;
        const heap = /--max-old-space-size=(\d+)/.exec(envOf(c).NODE_OPTIONS?.value ?? '')?.[1];
        if (!limit || !heap) {
          problems.push(`${name} ${c.name}: ${limit ? 'no NODE_OPTIONS --max-old-space-size' : 'no memory limit'}`);
          continue;
        }
        const share = (Number(heap) * 1024 ** 2) / bytes(limit);
        if (share < 0.7 || share > 0.8) problems.push(`${name} ${c.name}: heap ${heap} MiB is ${Math.round(share * 100)}% of ${limit}`);
      }
    }
    return problems;
  }

  it('sizes the heap of every base container to its memory limit (NODE_OPTIONS, ADR 0172)', () => {
    expect(heapProblems(docs)).toEqual([]);
  });

  whenRendered('%s: NODE_OPTIONS heap is ~75% of each container\'s memory limit, after the overlay\'s patches', (dir) => {
    const r = render(dir);
    expect(r.status).toBe(0);
    expect(heapProblems(r.docs)).toEqual([]);
  });

  whenRendered('%s: every Deployment has a policy/v1 PodDisruptionBudget selecting its pods', (dir) => {
    const r = render(dir);
    const pdbs = r.docs.filter((d) => d.kind === 'PodDisruptionBudget');
    const uncovered = r.docs
      .filter((d) => d.kind === 'Deployment')
      .filter((d) => {
        const labels = d.spec.template.metadata.labels;
        return !pdbs.some((p) => p.apiVersion === 'policy/v1' && Object.entries(p.spec.selector.matchLabels).every(([k, v]) => labels[k] === v));
      })
      .map((d) => d.metadata.name);
    expect(uncovered).toEqual([]);
    // maxUnavailable, not minAvailable: a one-replica Deployment must never block a node drain.
    for (const p of pdbs) expect([p.metadata.name, p.spec.maxUnavailable, p.spec.minAvailable]).toEqual([p.metadata.name, 1, undefined]);
  });

  describe('rollout order: migrations and topics before the apps (ADR 0171)', () => {
    it.each(APPS)('%s waits in an init container for the schema and topics of its image', (app) => {
      const spec = named('Deployment', app).spec.template.spec;
      const init = (spec.initContainers ?? []).find((c: Obj) => c.name === 'await-schema');
      expect(init).toBeDefined();
      expect(init.image).toBe(container(named('Deployment', app)).image);
      expect(init.command).toBeUndefined(); // keep the image's tini entrypoint
      expect(init.args.join(' ')).toBe('node tools/deploy/await-schema.js');
      expect(existsSync(join(root, 'tools/deploy/await-schema.js'))).toBe(true);
      const env = envOf(init);
      expect(env.MELD_APP?.value).toBe(app);
      expect(init.envFrom.map((e: Obj) => e.configMapRef?.name)).toContain('meld-config'); // MELD_KAFKA_BROKERS, MELD_CLICKHOUSE_DB
      const schemaStores = info(app).stores.filter((st) => st === 'postgres' || st === 'clickhouse');
      for (const st of schemaStores) expect(env[STORE_SECRET[st]!]?.valueFrom?.secretKeyRef).toEqual({ name: 'meld-secrets', key: STORE_SECRET[st] });
      // Only what it reads: no admin token, no keys, no store it does not check.
      expect(Object.keys(env).sort()).toEqual(['MELD_APP', 'NODE_OPTIONS', ...schemaStores.map((st) => STORE_SECRET[st]!)].sort());
      expect(init.securityContext).toEqual(container(named('Deployment', app)).securityContext);
    });

    it('runs migrate and topics as Argo CD sync hooks in the wave after meld-config and before the apps', () => {
      const wave = (d: Obj) => Number(d.metadata.annotations?.['argocd.argoproj.io/sync-wave'] ?? 0);
      for (const job of ['migrate', 'topics']) {
        const a = named('Job', job).metadata.annotations ?? {};
        expect([job, a['argocd.argoproj.io/hook'], a['argocd.argoproj.io/hook-delete-policy'], a['argocd.argoproj.io/sync-wave']]).toEqual([job, 'Sync', 'BeforeHookCreation', '-1']);
      }
      for (const app of APPS) expect([app, wave(named('Deployment', app))]).toEqual([app, 0]);
      expect(base.k.generatorOptions?.annotations?.['argocd.argoproj.io/sync-wave']).toBe('-2');
      // An overlay that generates the Secret puts it in the same early wave.
      for (const overlay of overlays) {
        const k = kustomization(join(root, 'k8s/overlays', overlay)).k;
        if (k.secretGenerator) expect([overlay, k.generatorOptions?.annotations?.['argocd.argoproj.io/sync-wave']]).toEqual([overlay, '-2']);
      }
    });
  });

  (kubectl ? it : it.skip)('docs/deploy.md states the Postgres connections the production overlay opens at its replicas and HPA maxima', () => {
    const r = render('k8s/overlays/production');
    const maxOf = new Map<string, number>(r.docs.filter((d) => d.kind === 'HorizontalPodAutoscaler').map((h) => [h.spec.scaleTargetRef.name, h.spec.maxReplicas]));
    // One LISTEN connection per pod of the apps with outbox relays (ADR 0212); a delivery pod's webhook claims pool (ADR 0315).
    const listens = new Set(['ingest', 'identity-merge', 'messaging']);
    let total = 0;
    for (const d of r.docs.filter((doc) => doc.kind === 'Deployment' && doc.metadata.labels?.['app.kubernetes.io/component'] === 'app')) {
      const env = envOf(container(d));
      if (!env.MELD_POSTGRES_URL) continue;
      const app = env.MELD_APP.value as string;
      const pool = Number(env.MELD_POSTGRES_POOL_SIZE?.value ?? 10);
      const perPod = pool + (listens.has(app) ? 1 : 0) + (env.MELD_MESSAGING_ROLE?.value === 'delivery' ? 1 : 0);
      total += perPod * (maxOf.get(d.metadata.name) ?? d.spec.replicas ?? 1);
    }
    expect(read('docs/deploy.md').match(/that is \*\*(\d+) connections\*\*/)?.[1]).toBe(String(total));
  });

  describe('production images', () => {
    const prod = kustomization(join(root, 'k8s/overlays/production'));

    it('names the image by digest, never by tag (ADR 0173)', () => {
      const images = prod.k.images as Obj[];
      expect(images.map((i) => i.name)).toEqual(['meld']);
      expect(images[0].newTag).toBeUndefined();
      expect(images[0].digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    });

    (kubectl ? it : it.skip)('renders every Meld container with @sha256:<64 hex>', () => {
      const r = render('k8s/overlays/production');
      const refs = podSpecs(r.docs).flatMap(({ spec }) => [...(spec.initContainers ?? []), ...spec.containers].map((c: Obj) => c.image));
      expect(refs.length).toBeGreaterThan(APPS.length);
      for (const ref of refs) expect(ref).toMatch(/^[\w.-]+(\/[\w.-]+)+@sha256:[0-9a-f]{64}$/);
    });

    it('tells how CI sets the digest', () => {
      expect(read('docs/deploy.md')).toMatch(/kustomize edit set image meld=[^\s]+@sha256:/);
    });
  });

  describe('KEDA overlay: consumers scale on Kafka lag (ADR 0174)', () => {
    const topicNames = new Set(JSON.parse(read('libs/contracts/src/topics.json')).topics.map((t: Obj) => t.name));
    /** A consumer group name the app really uses: a string literal in its source. */
    const groupIn = (app: string, group: string) =>
      sourceFilesUnder(join(root, 'apps', app, 'src')).some((f) => readFileSync(f, 'utf8').includes(`'${group}'`));

    (kubectl ? it : it.skip)('renders, and never lets an HPA and a ScaledObject scale one Deployment', () => {
      const r = render('k8s/overlays/keda');
      expect([r.stderr, r.status]).toEqual(['', 0]);
      const scaled = r.docs.filter((d) => d.kind === 'ScaledObject');
      const hpas = r.docs.filter((d) => d.kind === 'HorizontalPodAutoscaler');
      expect(scaled.map((d) => d.spec.scaleTargetRef.name).sort()).toEqual(['identity-merge', 'probes']);
      const targets = [...scaled.map((d) => d.spec.scaleTargetRef.name), ...hpas.map((h) => h.spec.scaleTargetRef.name)];
      expect(targets.filter((t, i) => targets.indexOf(t) !== i)).toEqual([]);
      expect(hpas.map((h) => h.spec.scaleTargetRef.name).sort()).toEqual(['ingest', 'messaging', 'messaging-delivery']);
      const brokers = r.docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name.startsWith('meld-config')).data.MELD_KAFKA_BROKERS;
      for (const so of scaled) {
        const app = so.spec.scaleTargetRef.name;
        expect(so.apiVersion).toBe('keda.sh/v1alpha1');
        expect(so.metadata.namespace).toBe('meld');
        expect(so.spec.scaleTargetRef).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' });
        expect(r.docs.some((d) => d.kind === 'Deployment' && d.metadata.name === app && d.spec.replicas === undefined)).toBe(true);
        expect(so.spec.maxReplicaCount).toBeLessThanOrEqual(partitions());
        expect(so.spec.minReplicaCount).toBeLessThanOrEqual(so.spec.maxReplicaCount);
        const kafka = so.spec.triggers.filter((t: Obj) => t.type === 'kafka');
        expect(kafka.length).toBeGreaterThan(0);
        expect(so.spec.triggers.some((t: Obj) => t.type === 'cpu')).toBe(true);
        for (const t of kafka) {
          expect([app, t.metadata.bootstrapServers]).toEqual([app, brokers]);
          expect([app, t.metadata.topic, topicNames.has(t.metadata.topic)]).toEqual([app, t.metadata.topic, true]);
          expect([app, t.metadata.consumerGroup, groupIn(app, t.metadata.consumerGroup)]).toEqual([app, t.metadata.consumerGroup, true]);
          expect(Number(t.metadata.lagThreshold)).toBeGreaterThan(0);
        }
      }
    });
  });

  whenRendered(
    'kubectl kustomize %s renders',
    (dir) => {
      const r = render(dir);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const rendered = r.docs;
      const deployments = rendered.filter((d) => d.kind === 'Deployment' && d.metadata.labels?.['app.kubernetes.io/component'] === 'app');
      expect(deployments.map((d) => d.metadata.name).sort()).toEqual(expect.arrayContaining(APPS));
      // The generated ConfigMap (name with hash suffix) is what the pods reference.
      const cm = rendered.find((d) => d.kind === 'ConfigMap' && d.metadata.name.startsWith('meld-config'));
      for (const dep of deployments) expect(container(dep).envFrom[0].configMapRef.name).toBe(cm.metadata.name);
    },
  );
});
