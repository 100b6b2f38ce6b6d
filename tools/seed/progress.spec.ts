import { PassThrough } from 'node:stream';

// tools/ is plain CommonJS outside the Nx graph.
const { progressBar } = require('./seed');

describe('meld seed progress', () => {
  it('writes progress lines where the output is not a terminal (a pipe, a CI log), not only a TTY bar', async () => {
    const stream = new PassThrough(); // isTTY undefined, as a pipe's
    let out = '';
    stream.on('data', (chunk) => (out += chunk));
    const bar = progressBar(true, stream);
    bar.start(1000, 0, { phase: 'contacts', rate: 0, note: '' });
    bar.increment(400, { rate: 40 });
    bar.stop();
    await new Promise((resolve) => setImmediate(resolve));
    expect(out).toMatch(/contacts .*\| 40% 400\/1000 · 40\/s/);
    expect(out.endsWith('\n')).toBe(true);
  });
});
