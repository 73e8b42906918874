import { monthOf, monthStart, nextMonthStart } from './month';

describe('calendar months (UTC)', () => {
  test('when an instant is given, then its month starts and ends at midnight UTC, whatever its offset', () => {
    const at = new Date('2026-12-01T00:30:00.000+01:00'); // still November in UTC
    expect(monthStart(at).toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(nextMonthStart(at).toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(nextMonthStart(new Date('2026-12-31T23:59:59.999Z')).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });

  test('when a month is named, then it is its first day, as the usage table stores it', () => {
    expect(monthOf(new Date('2026-11-30T23:59:59.999Z'))).toBe('2026-11-01');
    expect(monthOf(new Date('2026-12-01T00:00:00.000+01:00'))).toBe('2026-11-01');
    expect(monthOf(new Date('2027-01-01T00:00:00.000Z'))).toBe('2027-01-01');
  });
});
