import { parseStraceSummary } from './syscalls';

describe('parseStraceSummary', () => {
  it('reads the calls column by syscall name, with or without errors, and leaves the total out', () => {
    const text = [
      '% time     seconds  usecs/call     calls    errors syscall',
      '------ ----------- ----------- --------- --------- ----------------',
      ' 52.10    0.012000           6      2000           writev',
      ' 30.00    0.007000           3      2100       100 read',
      '  0.00    0.000000           0         3           epoll_wait',
      '------ ----------- ----------- --------- --------- ----------------',
      '100.00    0.019000           4      4103       100 total',
    ].join('\n');
    expect([...parseStraceSummary(text)]).toEqual([
      ['writev', 2000],
      ['read', 2100],
      ['epoll_wait', 3],
    ]);
  });
});
