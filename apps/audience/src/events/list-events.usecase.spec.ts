import { BadRequestException } from '@nestjs/common';
import { pageTotal } from '@meld/api';
import { parsePaging } from './list-events.usecase';

describe('the events paging parameters', () => {
  const refusal = (start: unknown, limit: unknown) => {
    try {
      parsePaging(start, limit);
    } catch (err) {
      return (err as BadRequestException).getResponse();
    }
    throw new Error('expected a refusal');
  };

  it('takes the limit itself, 500, and refuses 501 naming `_limit`', () => {
    expect(parsePaging('0', '500')).toEqual({ start: 0, limit: 500 });
    expect(refusal('0', '501')).toEqual({ message: '_limit must be an integer from 1 to 500', details: { parameter: '_limit' } });
  });

  it('says a repeated parameter is repeated, naming it', () => {
    expect(refusal(['0', '5'], '10')).toEqual({ message: '_start is given more than once', details: { parameter: '_start' } });
    expect(refusal('0', ['10', '20'])).toEqual({ message: '_limit is given more than once', details: { parameter: '_limit' } });
  });

  it('names the missing one of the pair', () => {
    expect(refusal('0', undefined)).toMatchObject({ details: { parameter: '_limit' } });
    expect(refusal(undefined, '5')).toMatchObject({ details: { parameter: '_start' } });
  });
});


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
