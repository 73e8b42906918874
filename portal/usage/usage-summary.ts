import { totalOf, type UsageDay } from '../../identity/daily-usage';
import { countFormat } from './usage-chart';

/** The days the summary sentence covers: the chart shows a month, the sentence the week a developer remembers. */
export const SUMMARY_DAYS = 7;

/** What "errors" means in the summary, said on the page beside it. */
export const ERRORS_DEFINITION = 'Errors are responses with a 4xx or 5xx status, 429 (rate limited) included.';

/** "in the last 7 days", or "today" when only one day is given. */
function period(days: number): string {
  return days === 1 ? 'today' : `in the last ${days} days`;
}

/** The share of errors, never rounded to 0 % or 100 % when that would be untrue. */
function errorShare(errors: number, total: number): string {
  if (errors === 0) return 'no errors';
  if (errors === total) return '100% errors';
  const percent = (errors / total) * 100;
  if (percent < 1) return 'under 1% errors';
  if (percent > 99) return 'over 99% errors';
  return `${Math.round(percent)}% errors`;
}

/**
 * The chart in one sentence, e.g. "1,204 requests in the last 7 days, 3% errors." over the latest
 * `SUMMARY_DAYS` of `days` (oldest first, as the portal API gives them).
 */
export function usageSummary(days: readonly UsageDay[]): string {
  const recent = days.slice(-SUMMARY_DAYS);
  let total = 0;
  let errors = 0;
  for (const day of recent) {
    total += totalOf(day);
    errors += day.clientErrors + day.rateLimited + day.serverErrors;
  }
  if (total === 0) return `No requests ${period(recent.length)}.`;
  return `${countFormat.format(total)} ${total === 1 ? 'request' : 'requests'} ${period(recent.length)}, ${errorShare(errors, total)}.`;
}
