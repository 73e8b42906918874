/** The first instant of the calendar month (UTC) that holds `at`: the monthly quota's window. */
export function monthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/** The first instant of the next calendar month (UTC): when the monthly quota starts again. */
export function nextMonthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/** The calendar month (UTC) holding `at` by its first day, `YYYY-MM-DD`: how account_usage_months names it. */
export function monthOf(at: Date): string {
  return monthStart(at).toISOString().slice(0, 10);
}

/** The calendar month (UTC) holding `now` (epoch ms): its name and its span, start included, end excluded. */
export function monthWindow(now: number): { month: string; startsAt: number; endsAt: number } {
  const at = new Date(now);
  return { month: monthOf(at), startsAt: monthStart(at).getTime(), endsAt: nextMonthStart(at).getTime() };
}
