import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { ROOT, filesUnder, readRepoFile } from './repo-files';

// Every relative link of the docs resolves to a file of the repository, so a renamed ADR,
// results file or source file cannot leave a dead link behind (ADR 0095).

const DOCS = ['README.md', ...filesUnder('docs', (name) => name.endsWith('.md')), ...filesUnder('bench/results', (name) => name.endsWith('.md'))];
const LINK = /\]\(([^)\s]+)\)/g;

function relativeLinks(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(LINK)].map((m) => m[1]).filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith('#'));
}

describe('links in the docs', () => {
  it.each(DOCS)('%s: every relative link names an existing file, without a line anchor', (doc) => {
    const broken = relativeLinks(readRepoFile(doc)).filter((target) => {
      const [path, anchor] = target.split('#');
      if (anchor !== undefined && /^L\d/.test(anchor)) return true;
      const resolved = normalize(join(dirname(join(ROOT, doc)), decodeURI(path)));
      return !resolved.startsWith(ROOT) || !existsSync(resolved);
    });
    expect(broken).toEqual([]);
  });

  it('covers the ADRs and the rules', () => {
    expect(DOCS).toEqual(expect.arrayContaining(['docs/rules.md', 'docs/architecture.md', 'docs/adr/README.md', 'docs/adr/0094-decisions-as-adrs.md']));
  });
});
