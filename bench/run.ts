/**
 * Benchmark entry: `node -r @swc-node/register bench/run.ts <scenario> [--option value]`.
 * A scenario is bench/scenarios/<name>.ts exporting `run(ctx)`; it measures Meld's code and
 * the raw-store baseline in the same run (system design §5) and returns rows that this
 * file prints as one table. `--json <file>` also writes the result as JSON.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Args } from './lib/args';
import { createContext, type Scenario } from './lib/context';
import { formatResult } from './lib/report';

async function main(): Promise<void> {
  const [name, ...rest] = process.argv.slice(2);
  const available = readdirSync(join(__dirname, 'scenarios'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -3));
  if (!name || !/^[a-z0-9-]+$/.test(name) || !available.includes(name)) {
    process.stderr.write(`usage: node -r @swc-node/register bench/run.ts <scenario> [--option value]\nscenarios: ${available.join(', ')}\n`);
    process.exit(2);
  }
  const args = new Args(rest);
  const scenario = (require(`./scenarios/${name}`) as { run: Scenario }).run;
  const ctx = createContext(args, join(__dirname, '..'));
  const result = await scenario(ctx);
  process.stdout.write(`${formatResult(result)}\n`);
  const jsonFile = args.string('json');
  if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify({ scenario: name, at: new Date().toISOString(), ...result }, null, 2)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
