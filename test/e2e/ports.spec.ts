import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// e2e files run in parallel Jest workers, each with a gateway on a fixed port and the other
// apps on the next seven (and the operations port at +100): no two files may share a range.
describe('e2e gateway ports', () => {
  it('no two e2e files start their apps on overlapping ports', () => {
    const ports = readdirSync(__dirname)
      .filter((f) => f.endsWith('.e2e-spec.ts'))
      .flatMap((f) => [...readFileSync(join(__dirname, f), 'utf8').matchAll(/^const GATEWAY_PORT = (\d+);/gm)].map((m) => ({ file: f, port: Number(m[1]) })));
    expect(ports.length).toBeGreaterThan(5);
    const clashes = ports.flatMap((a, i) => ports.slice(i + 1).filter((b) => Math.abs(a.port - b.port) < 8 || Math.abs(Math.abs(a.port - b.port) - 100) < 8).map((b) => `${a.file}:${a.port} ~ ${b.file}:${b.port}`));
    expect(clashes).toEqual([]);
  });
});
