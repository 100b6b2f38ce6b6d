import { Args } from './args';

describe('bench Args', () => {
  it('reads a switch as 0, 1 or a bare flag, and its fallback when absent', () => {
    const args = new Args(['--split', '0', '--direct', '1', '--floor-after']);
    expect(args.bool('split', true)).toBe(false);
    expect(args.bool('direct', false)).toBe(true);
    expect(args.bool('floor-after', false)).toBe(true);
    expect(args.bool('enqueue-only', true)).toBe(true);
  });

  it('refuses a switch that is neither 0 nor 1, naming it', () => {
    expect(() => new Args(['--split', 'yes']).bool('split', true)).toThrow('--split wants 0 or 1, got "yes"');
  });

  it('keeps integers positive', () => {
    expect(new Args(['--messages', '3_000']).int('messages', 1)).toBe(3000);
    expect(() => new Args(['--messages', '0']).int('messages', 1)).toThrow('--messages wants a positive integer, got "0"');
  });
});
