// Compiles every app and lib with SWC (decorator metadata on) into <project>/dist.
// One process for the whole tree: on 2 cores this is ~20x faster than tsc per project;
// type checking is a separate step (`npm run typecheck`), as in Nx's SWC executor.
import { transformFile } from '@swc/core';
import { copyFile, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const swcOptions = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
  sourceMaps: true,
};
const isSource = (f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !/\.(spec|integration-spec|e2e-spec)\.ts$/.test(f);
// Assets required at run time next to the compiled code (topic and app tables, SQL migrations).
const isAsset = (f) => f.endsWith('.json') || f.endsWith('.sql');

async function* walk(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(p);
    else if (isSource(p) || isAsset(p)) yield p;
  }
}

async function projects(args) {
  if (args.length) return args.map((a) => join(root, a));
  const out = [];
  for (const kind of ['libs', 'apps']) {
    for (const e of await readdir(join(root, kind), { withFileTypes: true })) if (e.isDirectory()) out.push(join(root, kind, e.name));
  }
  return out;
}

const started = Date.now();
let files = 0;
for (const project of await projects(process.argv.slice(2))) {
  const src = join(project, 'src');
  const dist = join(project, 'dist');
  await rm(dist, { recursive: true, force: true });
  const jobs = [];
  for await (const file of walk(src)) {
    if (isAsset(file)) {
      const target = join(dist, relative(src, file));
      jobs.push(mkdir(dirname(target), { recursive: true }).then(() => copyFile(file, target)));
      continue;
    }
    const out = join(dist, relative(src, file)).replace(/\.ts$/, '.js');
    jobs.push(
      transformFile(file, { ...swcOptions, filename: file, sourceFileName: relative(dirname(out), file) }).then(async ({ code, map }) => {
        await mkdir(dirname(out), { recursive: true });
        await writeFile(out, `${code}\n//# sourceMappingURL=${out.split('/').pop()}.map\n`);
        if (map) await writeFile(`${out}.map`, map);
      }),
    );
  }
  await Promise.all(jobs);
  files += jobs.length;
}
console.log(`build: ${files} files in ${Date.now() - started} ms`);
