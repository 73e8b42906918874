import type { Plan } from '../../identity/plans';
import { createPlanPolicies, planPolicy, rateLimitField } from './plan-policies';

const plan = (requestsPerMinute: number, requestsPerMonth: number | null): Plan => ({ name: 'p', requestsPerMinute, requestsPerMonth, createdAt: new Date(0), updatedAt: new Date(0) });
const DAY = 86_400;

describe('plan policies (RateLimit-Policy)', () => {
  test('when a plan has no monthly quota, then only the minute policy is named', () => {
    expect(planPolicy(plan(600, null), Date.UTC(2026, 10, 5))).toBe('"minute";q=600;w=60');
  });

  test("when a plan has a monthly quota, then the month policy's window is the current calendar month's length in seconds", () => {
    expect(planPolicy(plan(600, 100_000), Date.UTC(2026, 10, 30, 23, 59, 59))).toBe(`"minute";q=600;w=60, "month";q=100000;w=${30 * DAY}`);
    expect(planPolicy(plan(600, 100_000), Date.UTC(2026, 11, 1))).toBe(`"minute";q=600;w=60, "month";q=100000;w=${31 * DAY}`);
    expect(planPolicy(plan(1, 5), Date.UTC(2027, 1, 14))).toBe(`"minute";q=1;w=60, "month";q=5;w=${28 * DAY}`);
    expect(planPolicy(plan(1, 5), Date.UTC(2028, 1, 14))).toBe(`"minute";q=1;w=60, "month";q=5;w=${29 * DAY}`);
  });

  test('when the clock moves to another month, then a plan\'s header follows it; a reloaded plan (a new object) gets its own', () => {
    const policyOf = createPlanPolicies();
    const metered = plan(600, 1000);
    const first = policyOf(metered, Date.UTC(2026, 10, 30, 23, 59));
    expect(first).toBe(`"minute";q=600;w=60, "month";q=1000;w=${30 * DAY}`);
    expect(policyOf(metered, Date.UTC(2026, 11, 1))).toBe(`"minute";q=600;w=60, "month";q=1000;w=${31 * DAY}`);
    // A clock set back (tests do) is a month of its own too.
    expect(policyOf(metered, Date.UTC(2026, 10, 15))).toBe(first);
    expect(policyOf(plan(600, 2000), Date.UTC(2026, 10, 15))).toBe(`"minute";q=600;w=60, "month";q=2000;w=${30 * DAY}`);
    // Without a monthly quota, the instant does not matter.
    expect(policyOf(plan(600, null), 0)).toBe('"minute";q=600;w=60');
  });
});

describe('the RateLimit field: the policy nearest exhaustion', () => {
  const decision = (allowed: boolean, remaining: number, resetSeconds: number) => ({ allowed, remaining, resetSeconds });

  test('when there is no monthly quota, then the minute policy is named', () => {
    expect(rateLimitField(decision(true, 598, 42), undefined)).toBe('"minute";r=598;t=42');
  });

  test('when the month has fewer requests left, then it is named; on a tie, or with fewer left in the minute, the minute is', () => {
    expect(rateLimitField(decision(true, 598, 42), decision(true, 12, 86_400))).toBe('"month";r=12;t=86400');
    expect(rateLimitField(decision(true, 12, 42), decision(true, 12, 86_400))).toBe('"minute";r=12;t=42');
    expect(rateLimitField(decision(true, 3, 42), decision(true, 1_234_567, 2_591_999))).toBe('"minute";r=3;t=42');
  });

  test('when a policy refused the request, then it is the one named', () => {
    expect(rateLimitField(decision(true, 0, 42), decision(false, 0, 30))).toBe('"month";r=0;t=30');
    expect(rateLimitField(decision(false, 0, 42), undefined)).toBe('"minute";r=0;t=42');
  });
});
