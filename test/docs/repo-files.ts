import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The repository root (this file is test/docs/repo-files.ts). */
export const ROOT = join(__dirname, '..', '..');

const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git', '.stack']);

/** Files under `dir` (relative to the root) whose name passes `keep`, as root-relative paths. */
export function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  const out: string[] = [];
  const walk = (abs: string): void => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(join(abs, entry.name));
      } else if (keep(entry.name)) {
        out.push(relative(ROOT, join(abs, entry.name)));
      }
    }
  };
  walk(join(ROOT, dir));
  return out.sort();
}

export function readRepoFile(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** The lines of one `## heading` section of a markdown file (up to the next `## `). */
export function markdownSection(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(`## ${heading}`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}
