/** The comment that marks a README shell block as a step of the quickstart. */
export const QUICKSTART_MARK = '<!-- quickstart -->';

const MARKED_BLOCK = /<!-- quickstart -->\s*\n```(\w*)\n([\s\S]*?)\n```/g;

/**
 * The README's quickstart steps, in order: the body of each fenced block that directly follows
 * the mark. A mark followed by anything but a bash block is an error, so a step cannot silently
 * drop out of the test that runs them.
 */
export function quickstartBlocks(markdown: string): string[] {
  const marks = markdown.split(QUICKSTART_MARK).length - 1;
  const blocks = [...markdown.matchAll(MARKED_BLOCK)];
  const notBash = blocks.filter((b) => b[1] !== 'bash');
  if (blocks.length !== marks || notBash.length) {
    throw new Error(`${marks} quickstart marks, ${blocks.length} directly followed by a fenced block, ${notBash.length} of them not \`\`\`bash`);
  }
  return blocks.map((b) => b[2]);
}

/** One bash script running the blocks in order, stopping at the first failing command; `done` lines mark each finished block. */
export function quickstartScript(blocks: readonly string[]): string {
  return ['set -e -o pipefail', ...blocks.flatMap((block, i) => [block, `echo "::quickstart block ${i + 1} done"`])].join('\n');
}
