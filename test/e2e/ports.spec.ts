import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// e2e systems may run at the same time (the shared one, those beside), each with a gateway on a fixed port and the other
// apps on the next seven (and the operations port at +100): no two files may share a range.
describe('e2e gateway ports', () => {
  it('no two e2e files start their apps on overlapping ports', () => {
    // The shared e2e system's too (ADR 0352): it runs while the other serial suites start theirs.
    const files = [...readdirSync(__dirname).filter((f) => f.endsWith('.e2e-spec.ts')), 'support/shared-system.ts'];
    const ports = files.flatMap((f) => [...readFileSync(join(__dirname, f), 'utf8').matchAll(/^(?:export )?const (?:SHARED_)?GATEWAY_PORT = (\d+);/gm)].map((m) => ({ file: f, port: Number(m[1]) })));
    // The pattern still finds ports where they are known to be (a renamed constant would hide a clash).
    expect(ports.map((p) => p.file)).toEqual(expect.arrayContaining(['support/shared-system.ts', 'crash.e2e-spec.ts', 'seed.e2e-spec.ts']));
    const clashes = ports.flatMap((a, i) => ports.slice(i + 1).filter((b) => Math.abs(a.port - b.port) < 8 || Math.abs(Math.abs(a.port - b.port) - 100) < 8).map((b) => `${a.file}:${a.port} ~ ${b.file}:${b.port}`));
    expect(clashes).toEqual([]);
  });
});
