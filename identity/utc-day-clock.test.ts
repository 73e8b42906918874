import { dayNumber } from './daily-usage';
import { createUtcDayClock } from './utc-day-clock';

describe('UTC day clock', () => {
  beforeEach(() => jest.useFakeTimers({ now: Date.parse('2026-11-25T23:59:59.000Z') }));
  afterEach(() => jest.useRealTimers());

  test('when midnight UTC passes, then today moves to the next day, and again a day later', () => {
    const clock = createUtcDayClock();
    const day = dayNumber(Date.parse('2026-11-25T00:00:00Z'));
    expect(clock.today()).toBe(day);
    jest.advanceTimersByTime(999);
    expect(clock.today()).toBe(day);
    jest.advanceTimersByTime(1);
    expect(clock.today()).toBe(day + 1);
    jest.advanceTimersByTime(24 * 60 * 60 * 1000);
    expect(clock.today()).toBe(day + 2);
    clock.close();
  });

  test('when its timer fires before the clock reaches midnight, then today stays and the clock waits for the rest', () => {
    let skew = -5000;
    const clock = createUtcDayClock(() => Date.now() + skew);
    const day = clock.today();
    // Its timer was set for 6 s ahead; a clock slowed by 5 s more reads 23:59:59 when it fires.
    skew = -10_000;
    jest.advanceTimersByTime(6000);
    expect(clock.today()).toBe(day);
    jest.advanceTimersByTime(5000);
    expect(clock.today()).toBe(day + 1);
    clock.close();
  });

  test('when closed, then no timer is left', () => {
    createUtcDayClock().close();
    expect(jest.getTimerCount()).toBe(0);
  });
});
