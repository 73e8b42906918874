import type { UsageDay } from '../../identity/daily-usage';
import { usageSummary } from './usage-summary';

const day = (n: number, counts: Partial<UsageDay> = {}): UsageDay => ({
  day: `2026-11-${String(n).padStart(2, '0')}`,
  ok: 0,
  clientErrors: 0,
  rateLimited: 0,
  serverErrors: 0,
  ...counts,
});
/** A month of days (1 to 30 November), with `counts` on the days given. */
const month = (counts: Record<number, Partial<UsageDay>>) => Array.from({ length: 30 }, (_, i) => day(i + 1, counts[i + 1]));

describe('usage summary sentence', () => {
  test('when the last 7 days hold 1,204 requests of which 36 failed, then it says so with a thousands separator', () => {
    const days = month({ 24: { ok: 1000, clientErrors: 20 }, 30: { ok: 168, rateLimited: 10, serverErrors: 6 } });
    expect(usageSummary(days)).toBe('1,204 requests in the last 7 days, 3% errors.');
  });

  test('when requests are older than 7 days, then they are left out of the sentence', () => {
    expect(usageSummary(month({ 23: { ok: 50, serverErrors: 50 }, 24: { ok: 2 } }))).toBe('2 requests in the last 7 days, no errors.');
    expect(usageSummary(month({ 23: { ok: 5 } }))).toBe('No requests in the last 7 days.');
  });

  test('when there is one request, then the noun is singular', () => {
    expect(usageSummary(month({ 30: { ok: 1 } }))).toBe('1 request in the last 7 days, no errors.');
    expect(usageSummary(month({ 30: { clientErrors: 1 } }))).toBe('1 request in the last 7 days, 100% errors.');
  });

  test('when errors are a sliver or almost all, then the share is never rounded to 0% or 100%', () => {
    expect(usageSummary(month({ 30: { ok: 999, serverErrors: 1 } }))).toBe('1,000 requests in the last 7 days, under 1% errors.');
    expect(usageSummary(month({ 30: { ok: 1, rateLimited: 999 } }))).toBe('1,000 requests in the last 7 days, over 99% errors.');
    expect(usageSummary(month({ 30: { ok: 1, clientErrors: 1 } }))).toBe('2 requests in the last 7 days, 50% errors.');
  });

  test('when 4xx, 429 and 5xx are all present, then each counts as an error', () => {
    expect(usageSummary(month({ 30: { ok: 7, clientErrors: 1, rateLimited: 1, serverErrors: 1 } }))).toBe('10 requests in the last 7 days, 30% errors.');
  });

  test('when fewer than 7 days are given, then the sentence covers those', () => {
    expect(usageSummary([day(30, { ok: 3 })])).toBe('3 requests today, no errors.');
    expect(usageSummary([day(29), day(30, { ok: 3 })])).toBe('3 requests in the last 2 days, no errors.');
  });
});
