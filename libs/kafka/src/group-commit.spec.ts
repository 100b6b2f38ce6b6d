import fc from 'fast-check';
import type { Message } from 'kafkajs';
import { chunkMessages, messageBytes } from './group-commit';

describe('messageBytes', () => {
  it('counts key and value in UTF-8, headers at their worst case, with room for the record', () => {
    const m: Message = { key: 'k', value: 'é', headers: { h: 'v', list: ['ab', Buffer.from('c')] } };
    expect(messageBytes(m)).toBe(24 + 1 + 2 + 3 * (1 + 1) + (3 * 4 + 3 * 2 + 1));
    expect(messageBytes({ key: null, value: null })).toBe(24);
  });
});

describe('chunkMessages (ADR 0346)', () => {
  it('keeps order, never an empty chunk, and each chunk within the bounds unless one message alone exceeds the bytes', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 500 }), { maxLength: 60 }), fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 1000 }), (sizes, maxCount, maxBytes) => {
        const items = sizes.map((_, i) => i);
        const chunks = chunkMessages(items, sizes, maxCount, maxBytes);
        expect(chunks.flat()).toEqual(items);
        for (const chunk of chunks) {
          expect(chunk.length).toBeGreaterThan(0);
          expect(chunk.length).toBeLessThanOrEqual(maxCount);
          const bytes = chunk.reduce((s, i) => s + sizes[i], 0);
          if (chunk.length > 1) expect(bytes).toBeLessThanOrEqual(maxBytes);
        }
        // Greedy: a chunk ends only where the next message would not fit.
        for (let c = 0; c + 1 < chunks.length; c++) {
          const bytes = chunks[c].reduce((s, i) => s + sizes[i], 0);
          expect(chunks[c].length === maxCount || bytes + sizes[chunks[c + 1][0]] > maxBytes).toBe(true);
        }
      }),
    );
  });
});
