import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// Branches are merged by hand here: no tracked text file may keep a merge conflict's marker.
const ROOT = join(__dirname, '../..');
const MARKER = /^(<{7} |={7}$|>{7} )/m;

describe('merge conflict markers', () => {
  it('no tracked source or doc file holds one', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((f) => /\.(ts|js|mjs|json|md|ya?ml|sql|sh)$/.test(f));
    const marked = files.filter((f) => {
      try {
        return MARKER.test(readFileSync(join(ROOT, f), 'utf8'));
      } catch {
        return false;
      }
    });
    expect(marked).toEqual([]);
  });
});
