import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// docs/adr/README.md is the index a newcomer reads: every decision file is in it, with its title.
const DIR = join(__dirname, '../../docs/adr');

describe('the ADR index', () => {
  const index = readFileSync(join(DIR, 'README.md'), 'utf8');
  const files = readdirSync(DIR).filter((f) => /^\d{4}-.+\.md$/.test(f));

  it.each(files)('lists %s with its title', (file) => {
    const title = /^# \d{4}\. (.+)$/m.exec(readFileSync(join(DIR, file), 'utf8'))?.[1];
    expect(title).toBeDefined();
    expect(index).toContain(`[${title}](${file})`);
  });

  it('numbers are unique', () => {
    const numbers = files.map((f) => f.slice(0, 4));
    expect(new Set(numbers).size).toBe(numbers.length);
  });
});
