import { pageTotal } from './list-events.usecase';

describe('the events page total', () => {
  const page = { start: 0, limit: 50 };

  it('is what a page that is not full lists, whatever the count read at the same moment saw', () => {
    expect(pageTotal(7, 3, page)).toBe(3);
    expect(pageTotal(2, 3, page)).toBe(3);
    expect(pageTotal(9, 4, { start: 50, limit: 50 })).toBe(54);
  });

  it('is zero for an empty first page', () => {
    expect(pageTotal(5, 0, page)).toBe(0);
  });

  it('is the count for a full page or one past the end, never less than the page reaches', () => {
    expect(pageTotal(120, 50, page)).toBe(120);
    expect(pageTotal(30, 50, page)).toBe(50);
    expect(pageTotal(60, 0, { start: 100, limit: 50 })).toBe(60);
  });
});
