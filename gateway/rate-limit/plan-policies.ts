import type { Plan } from '../../identity/plans';
import { monthWindow } from '../../identity/month';
import { fieldOf } from './rate-limit-headers';
import type { RateDecision } from './rate-limiter';

/** The per-minute budget of an account's keys in one environment. */
const MINUTE_POLICY = 'minute';
export const MINUTE_WINDOW_SECONDS = 60;
/** The monthly quota of an account, both environments together. */
export const MONTH_POLICY = 'month';

/**
 * A plan's `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers-11) in the month holding
 * `now`: `"minute";q=600;w=60`, followed by `"month";q=100000;w=<the month's seconds>` when the
 * plan has a monthly quota.
 */
export function planPolicy(plan: Pick<Plan, 'requestsPerMinute' | 'requestsPerMonth'>, now: number): string {
  const minute = `"${MINUTE_POLICY}";q=${plan.requestsPerMinute};w=${MINUTE_WINDOW_SECONDS}`;
  if (plan.requestsPerMonth === null) return minute;
  const { startsAt, endsAt } = monthWindow(now);
  const monthSeconds = (endsAt - startsAt) / 1000;
  return `${minute}, "${MONTH_POLICY}";q=${plan.requestsPerMonth};w=${monthSeconds}`;
}

/**
 * `planPolicy`, made once per plan (and month, for a plan with a monthly quota) rather than per
 * request. A plan the book reloads is a new object, so a changed plan gets its own header at once.
 */
export function createPlanPolicies(): (plan: Plan, now: number) => string {
  const made = new WeakMap<Plan, { header: string; from: number; until: number }>();
  /** `now` (epoch ms) matters only to a plan with a monthly quota. */
  return function policyOf(plan, now) {
    const known = made.get(plan);
    if (known && now >= known.from && now < known.until) return known.header;
    const month = plan.requestsPerMonth === null ? undefined : monthWindow(now);
    const entry = { header: planPolicy(plan, now), from: month?.startsAt ?? -Infinity, until: month?.endsAt ?? Infinity };
    made.set(plan, entry);
    return entry.header;
  };
}

/**
 * The `RateLimit` field: the policy nearest exhaustion, the one with fewest requests left (the
 * minute's on a tie), or the one that refused the request.
 */
export function rateLimitField(perMinute: RateDecision, perMonth: RateDecision | undefined): string {
  if (perMonth && perMinute.allowed && (!perMonth.allowed || perMonth.remaining < perMinute.remaining)) return fieldOf(MONTH_POLICY, perMonth);
  return fieldOf(MINUTE_POLICY, perMinute);
}

