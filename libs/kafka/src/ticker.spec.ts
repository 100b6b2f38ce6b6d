import { Ticker } from './ticker';

describe('Ticker', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('ticks every registered function until it unregisters, on one timer', () => {
    const ticker = new Ticker(100);
    const a = jest.fn();
    const b = jest.fn();
    const offA = ticker.register(a);
    ticker.register(b);
    jest.advanceTimersByTime(250);
    expect(a).toHaveBeenCalledTimes(2);
    expect(b).toHaveBeenCalledTimes(2);
    offA();
    jest.advanceTimersByTime(100);
    expect(a).toHaveBeenCalledTimes(2);
    expect(b).toHaveBeenCalledTimes(3);
    expect(jest.getTimerCount()).toBe(1);
    ticker.close();
    expect(jest.getTimerCount()).toBe(0);
  });
});
