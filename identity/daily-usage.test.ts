import { countOutcome, dayNumber, dayText, fillDays, noOutcomes, totalOf, type OutcomeCounts } from './daily-usage';

const counted = (...statuses: number[]): OutcomeCounts => {
  const counts = noOutcomes();
  for (const status of statuses) countOutcome(counts, status);
  return counts;
};

describe('daily usage: days and outcome classes', () => {
  test('when an instant is bucketed, then its day is the UTC calendar day, whatever the time of day', () => {
    const day = dayNumber(Date.parse('2026-11-25T00:00:00.000Z'));
    expect(dayText(day)).toBe('2026-11-25');
    expect(dayNumber(Date.parse('2026-11-25T23:59:59.999Z'))).toBe(day);
    expect(dayNumber(Date.parse('2026-11-24T23:59:59.999Z'))).toBe(day - 1);
    expect(dayNumber(Date.parse('2026-11-26T00:00:00.000Z'))).toBe(day + 1);
    expect(dayNumber(0)).toBe(0);
    expect(dayText(0)).toBe('1970-01-01');
  });

  test('when a leap day and a year end are crossed, then the day texts follow the calendar', () => {
    const leap = dayNumber(Date.parse('2028-02-29T12:00:00Z'));
    expect([dayText(leap - 1), dayText(leap), dayText(leap + 1)]).toEqual(['2028-02-28', '2028-02-29', '2028-03-01']);
    const newYear = dayNumber(Date.parse('2027-01-01T00:00:00Z'));
    expect(dayText(newYear - 1)).toBe('2026-12-31');
  });

  test('when statuses are counted, then 1xx-3xx are ok, 429 is rate limited, other 4xx are client errors and 5xx server errors', () => {
    expect(counted(100, 200, 201, 204, 301, 304)).toEqual({ ok: 6, clientErrors: 0, rateLimited: 0, serverErrors: 0 });
    expect(counted(400, 401, 404, 413, 428, 430, 499)).toEqual({ ok: 0, clientErrors: 7, rateLimited: 0, serverErrors: 0 });
    expect(counted(429, 429)).toEqual({ ok: 0, clientErrors: 0, rateLimited: 2, serverErrors: 0 });
    expect(counted(500, 502, 503, 504, 599)).toEqual({ ok: 0, clientErrors: 0, rateLimited: 0, serverErrors: 5 });
    expect(totalOf(counted(200, 404, 429, 500))).toBe(4);
  });

  test('when days are filled, then every day from first to last is there, oldest first, zero where nothing was counted', () => {
    const first = dayNumber(Date.parse('2026-02-27T00:00:00Z'));
    const days = fillDays(new Map([[first + 1, counted(200, 404)]]), first, first + 2);
    expect(days).toEqual([
      { day: '2026-02-27', ok: 0, clientErrors: 0, rateLimited: 0, serverErrors: 0 },
      { day: '2026-02-28', ok: 1, clientErrors: 1, rateLimited: 0, serverErrors: 0 },
      { day: '2026-03-01', ok: 0, clientErrors: 0, rateLimited: 0, serverErrors: 0 },
    ]);
    expect(fillDays(new Map(), first, first)).toHaveLength(1);
  });
});
