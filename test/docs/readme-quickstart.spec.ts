import { spawnSync } from 'node:child_process';
import { quickstartBlocks } from './quickstart-blocks';
import { readRepoFile } from './repo-files';

// The shape of the README's quickstart; test/e2e/quickstart.e2e-spec.ts runs it.
describe('the README quickstart', () => {
  const blocks = quickstartBlocks(readRepoFile('README.md'));

  it('goes bootstrap → two sources → an event → the merged contact and its events → a filtered count', () => {
    expect(blocks).toHaveLength(6);
    expect(blocks[0]).toContain('npx meld bootstrap --json');
    expect(blocks.join('\n')).toEqual(expect.stringContaining('/audience/count'));
  });

  it.each(blocks.map((block, i) => [i + 1, block]))('block %i is valid bash, without jq', (_n, block) => {
    expect(spawnSync('bash', ['-n'], { input: block, encoding: 'utf8' }).stderr).toBe('');
    expect(block).not.toMatch(/\bjq\b/);
  });

  it('a mark without a bash block right after it is an error', () => {
    expect(() => quickstartBlocks('<!-- quickstart -->\n```sh\nls\n```\n')).toThrow('1 of them not');
    expect(() => quickstartBlocks('<!-- quickstart -->\ntext\n```bash\nls\n```\n')).toThrow('0 directly followed');
    expect(quickstartBlocks('<!-- quickstart -->\n```bash\nls\npwd\n```\n')).toEqual(['ls\npwd']);
  });
});
