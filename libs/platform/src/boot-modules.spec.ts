import { execFileSync } from 'node:child_process';

// What an app process loads at boot (ADR 0355): not @nestjs/swagger (the OpenAPI document is
// built on its first request) nor the OpenTelemetry SDK and OTLP exporter (only a process with
// OTEL_EXPORTER_OTLP_ENDPOINT exports, ADR 0187). Runs in a child: Jest's registry and its
// native require (Terminus requires @nestjs/swagger through createRequire) are not the app's.
const LAZY = ['@nestjs/swagger', 'es-toolkit/compat', '@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-http'];

/** In one child (it costs a few seconds of CPU): what loading @meld/platform requested, then tracing without an exporter, then with one. */
function loadedInChild(): { atBoot: string[]; noExporter: string[]; exporter: string[] } {
  const script = `
    const Module = require('node:module');
    const requested = new Set();
    const load = Module._load;
    Module._load = function (request) { requested.add(request); return load.apply(this, arguments); };
    const lazy = ${JSON.stringify(LAZY)};
    const loaded = () => lazy.filter((m) => requested.has(m));
    const platform = require(${JSON.stringify(require.resolve('./index.ts'))});
    const atBoot = loaded();
    platform.startTracing({ service: 'probe', env: {} });
    const noExporter = loaded();
    platform.startTracing({ service: 'probe', env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' } });
    process.stdout.write(JSON.stringify({ atBoot, noExporter, exporter: loaded() }));
    process.exit(0);`;
  return JSON.parse(execFileSync(process.execPath, ['-r', '@swc-node/register', '-e', script], { encoding: 'utf8', env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '' } }));
}

describe('modules an app loads at boot', () => {
  it('are neither swagger nor the OTel SDK, which an OTLP endpoint loads when tracing starts', () => {
    expect(loadedInChild()).toEqual({ atBoot: [], noExporter: [], exporter: ['@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-http'] });
  });
});
