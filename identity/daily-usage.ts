/** Milliseconds in a UTC day: usage days are counted from the Unix epoch, so a day is one division away. */
export const DAY_MS = 24 * 60 * 60 * 1000;

/** The outcome classes a request is counted in, once its status is known. */
export interface OutcomeCounts {
  /** 1xx, 2xx and 3xx: the request did what was asked. */
  ok: number;
  /** 4xx except 429: the client sent something the API refused. */
  clientErrors: number;
  /** 429: the key's rate limit or quota refused it. */
  rateLimited: number;
  /** 5xx: the gateway or its upstream failed. */
  serverErrors: number;
}

/** One UTC day of a key's (or an account's) requests, as the portal API and the chart show it. */
export interface UsageDay extends OutcomeCounts {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
}

/** Days since 1970-01-01 (UTC) of an instant in milliseconds: no Date, so the hot path allocates nothing. */
export function dayNumber(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** `YYYY-MM-DD` of a day number. */
export function dayText(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

export const noOutcomes = (): OutcomeCounts => ({ ok: 0, clientErrors: 0, rateLimited: 0, serverErrors: 0 });

/** Adds one response of `status` to its class, in place (the one place the classes are decided). */
export function countOutcome(counts: OutcomeCounts, status: number): void {
  if (status < 400) counts.ok++;
  else if (status === 429) counts.rateLimited++;
  else if (status < 500) counts.clientErrors++;
  else counts.serverErrors++;
}

export function addOutcomes(target: OutcomeCounts, from: OutcomeCounts): void {
  target.ok += from.ok;
  target.clientErrors += from.clientErrors;
  target.rateLimited += from.rateLimited;
  target.serverErrors += from.serverErrors;
}

export const totalOf = (c: OutcomeCounts): number => c.ok + c.clientErrors + c.rateLimited + c.serverErrors;

/** One entry per day from `first` to `last` (day numbers, inclusive), oldest first; days without counts are zero. */
export function fillDays(counts: ReadonlyMap<number, OutcomeCounts>, first: number, last: number): UsageDay[] {
  const days: UsageDay[] = [];
  for (let day = first; day <= last; day++) {
    const c = counts.get(day);
    days.push({ day: dayText(day), ok: c?.ok ?? 0, clientErrors: c?.clientErrors ?? 0, rateLimited: c?.rateLimited ?? 0, serverErrors: c?.serverErrors ?? 0 });
  }
  return days;
}
