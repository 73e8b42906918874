import { RateLimiterMemory } from 'rate-limiter-flexible';
import { headersSet, refusalOf, runStep, stepRequest } from '../../test/support/run-step';
import type { Plan } from '../../identity/plans';
import type { Environment } from '../pipeline/pipeline';
import type { RateLimitKind } from '../metrics/gateway-metrics';
import { createBudgetLeases, type LeaseCounter } from '../rate-limit/budget-leases';
import { leaseCounter } from '../rate-limit/limiter-factory';
import { createMonthCounter } from '../rate-limit/month-counter';
import { rateLimitPerAccount } from './rate-limit';

const NOVEMBER_END = Date.UTC(2026, 11, 1);
const NOVEMBER_SECONDS = 30 * 86_400;

const plan = (name: string, requestsPerMinute: number, requestsPerMonth: number | null): Plan => ({
  name,
  requestsPerMinute,
  requestsPerMonth,
  createdAt: new Date(0),
  updatedAt: new Date(0),
});

/** A counter with the tokens each take asked for recorded, or failing while `failing` is set. */
function recorded(counter: LeaseCounter) {
  const asked: number[] = [];
  const state = { asked, failing: undefined as Error | undefined };
  const wrapped: LeaseCounter = {
    take: (key, tokens) => {
      asked.push(tokens);
      return state.failing ? Promise.reject(state.failing) : counter.take(key, tokens);
    },
  };
  return { state, counter: wrapped };
}

/**
 * The step on real leases over in-memory counters, one per environment for the minute and one
 * month counter seeded from `stored` (the usage table's counts), at the instant `clock.now`.
 */
function setUp(plans: Record<string, Plan>, stored: Record<string, number> = {}) {
  const clock = { now: NOVEMBER_END - 30_000 };
  const limited: RateLimitKind[] = [];
  const admitted: string[] = [];
  const minuteCounter = (environment: Environment) => recorded(leaseCounter(new RateLimiterMemory({ points: Number.MAX_SAFE_INTEGER, duration: 60, keyPrefix: environment })));
  const minute = { production: minuteCounter('production'), staging: minuteCounter('staging') };
  const month = recorded(createMonthCounter({ keyPrefix: 'quota:', seed: async (accountId, m) => stored[`${accountId}@${m}`] ?? 0, clock: () => clock.now }));
  const monthLeases = createBudgetLeases({ counter: month.counter, windowMs: 28 * 86_400_000, clock: () => clock.now });
  const book = { get: (name: string) => plans[name] ?? plans.default! };
  const stepFor = (environment: Environment) =>
    rateLimitPerAccount({
      plans: book,
      minute: createBudgetLeases({ counter: minute[environment].counter, windowMs: 60_000 }),
      month: monthLeases,
      usage: { recordAdmitted: (accountId) => void admitted.push(accountId) },
      clock: () => clock.now,
      metrics: { rateLimited: (kind) => void limited.push(kind) },
    });
  const steps = { production: stepFor('production'), staging: stepFor('staging') };
  const send = async (ctx: { accountId: string; keyId?: string; plan: string; environment?: Environment }) => {
    const environment = ctx.environment ?? 'production';
    const req = stepRequest({ ctx: { keyId: ctx.keyId ?? 'key_a', accountId: ctx.accountId, plan: ctx.plan, environment } });
    const outcome = await runStep(steps[environment], req);
    return { outcome, headers: headersSet(req) };
  };
  return { send, clock, limited, admitted, minute, month: month.state };
}

describe('rate-limit step (the account plan’s limits)', () => {
  test('when the plan has no monthly quota, then only the minute policy is named, the request goes on and is counted as admitted', async () => {
    const { send, limited, admitted, month } = setUp({ default: plan('default', 600, null) });
    expect(await send({ accountId: '7', plan: 'default' })).toEqual({
      outcome: { next: 1 },
      headers: { 'RateLimit-Policy': '"minute";q=600;w=60', RateLimit: expect.stringMatching(/^"minute";r=599;t=(60|[1-5]\d|[1-9])$/) },
    });
    expect(admitted).toEqual(['7']);
    expect(limited).toEqual([]);
    expect(month.asked).toEqual([]); // no quota, nothing counted against one
  });

  test('when two keys of one account send in one environment, then they spend one budget; the other environment and other accounts have their own', async () => {
    const { send } = setUp({ default: plan('default', 3, null) });
    const remaining = async (ctx: Parameters<typeof send>[0]) => {
      const { outcome, headers } = await send(ctx);
      return outcome.error ? (outcome.error as { code: string }).code : /;r=(\d+);/.exec(headers.RateLimit!)![1];
    };
    expect(await remaining({ accountId: '7', keyId: 'key_a', plan: 'default' })).toBe('2');
    expect(await remaining({ accountId: '7', keyId: 'key_b', plan: 'default' })).toBe('1');
    expect(await remaining({ accountId: '7', keyId: 'key_a', plan: 'default' })).toBe('0');
    expect(await remaining({ accountId: '7', keyId: 'key_b', plan: 'default' })).toBe('rate_limited');
    expect(await remaining({ accountId: '7', keyId: 'key_c', plan: 'default', environment: 'staging' })).toBe('2');
    expect(await remaining({ accountId: '8', keyId: 'key_d', plan: 'default' })).toBe('2');
  });

  test('when the minute budget is spent, then 429 rate_limited with Retry-After names the minute policy, and neither quota nor usage is counted', async () => {
    const { send, limited, admitted, month } = setUp({ default: plan('default', 1, null), metered: plan('metered', 1, 1000) });
    await send({ accountId: '7', plan: 'metered' });
    const { outcome, headers } = await send({ accountId: '7', plan: 'metered' });
    const seconds = Number(refusalOf(outcome).headers['Retry-After']);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(refusalOf(outcome)).toEqual({
      next: 0,
      body: { code: 'rate_limited', status: 429, message: `Rate limit of 1 requests per 60 seconds exceeded; retry in ${seconds} s.` },
      headers: { 'Retry-After': String(seconds) },
    });
    expect(headers).toEqual({ 'RateLimit-Policy': `"minute";q=1;w=60, "month";q=1000;w=${NOVEMBER_SECONDS}`, RateLimit: `"minute";r=0;t=${seconds}` });
    expect(limited).toEqual(['key']);
    expect(admitted).toEqual(['7']);
    expect(month.asked).toEqual([1]); // the first request's token only
  });

  test('when the plan has a monthly quota, then both policies are named and RateLimit names the one with fewer requests left', async () => {
    const { send } = setUp({ default: plan('default', 600, null), metered: plan('metered', 600, 1000) }, { '7@2026-11-01': 990, '8@2026-11-01': 10 });
    const nearQuota = await send({ accountId: '7', plan: 'metered' });
    expect(nearQuota.headers).toEqual({ 'RateLimit-Policy': `"minute";q=600;w=60, "month";q=1000;w=${NOVEMBER_SECONDS}`, RateLimit: '"month";r=9;t=30' });
    const plenty = await send({ accountId: '8', plan: 'metered' });
    expect(plenty.headers.RateLimit).toMatch(/^"minute";r=599;t=\d+$/);
  });

  test('when the monthly quota is spent, then 429 quota_exceeded says when it renews, with Retry-After until the month ends, and later requests spend no minute budget', async () => {
    const { send, clock, limited, admitted, minute, month } = setUp({ default: plan('default', 600, null), metered: plan('metered', 600, 5) }, { '7@2026-11-01': 4 });
    expect((await send({ accountId: '7', plan: 'metered' })).headers.RateLimit).toBe('"month";r=0;t=30');
    const refused = await send({ accountId: '7', plan: 'metered' });
    const body = { code: 'quota_exceeded', status: 429, message: 'Monthly quota of 5 requests exceeded; it renews at 2026-12-01T00:00:00Z, in 30 s.' };
    expect(refusalOf(refused.outcome)).toEqual({ next: 0, body, headers: { 'Retry-After': '30' } });
    expect(refused.headers).toEqual({ 'RateLimit-Policy': `"minute";q=600;w=60, "month";q=5;w=${NOVEMBER_SECONDS}`, RateLimit: '"month";r=0;t=30' });
    const minuteTakes = minute.production.state.asked.length;
    clock.now += 20_500;
    const later = await send({ accountId: '7', plan: 'metered' });
    expect(refusalOf(later.outcome)).toEqual({ next: 0, body: { ...body, message: 'Monthly quota of 5 requests exceeded; it renews at 2026-12-01T00:00:00Z, in 10 s.' }, headers: { 'Retry-After': '10' } });
    expect(later.headers.RateLimit).toBe('"month";r=0;t=10');
    expect(minute.production.state.asked.length).toBe(minuteTakes); // refused from memory before the minute budget
    expect(month.asked).toEqual([1, 1]);
    expect(limited).toEqual(['quota', 'quota']);
    expect(admitted).toEqual(['7']);
    // December: a new quota, and a 31-day month in the policy.
    clock.now = NOVEMBER_END;
    expect(await send({ accountId: '7', plan: 'metered' })).toEqual({
      outcome: { next: 1 },
      headers: { 'RateLimit-Policy': `"minute";q=600;w=60, "month";q=5;w=${31 * 86_400}`, RateLimit: '"month";r=4;t=2678400' },
    });
  });

  test('when the plan changes, then the next request is limited and described by the new plan', async () => {
    const plans = { default: plan('default', 600, null), metered: plan('metered', 2, 3) };
    const { send } = setUp(plans);
    await send({ accountId: '7', plan: 'metered' });
    await send({ accountId: '7', plan: 'metered' });
    expect(refusalOf((await send({ accountId: '7', plan: 'metered' })).outcome).body.code).toBe('rate_limited');
    plans.metered = plan('metered', 10, 2); // a reload makes a new plan object
    const { outcome, headers } = await send({ accountId: '7', plan: 'metered' });
    expect(refusalOf(outcome).body.code).toBe('quota_exceeded');
    expect(headers['RateLimit-Policy']).toBe(`"minute";q=10;w=60, "month";q=2;w=${NOVEMBER_SECONDS}`);
    plans.metered = plan('metered', 10, null);
    // Five taken: three under the old limit (one refused), and the one the quota refused after its minute budget.
    expect(await send({ accountId: '7', plan: 'metered' })).toEqual({
      outcome: { next: 1 },
      headers: { 'RateLimit-Policy': '"minute";q=10;w=60', RateLimit: expect.stringMatching(/^"minute";r=5;t=\d+$/) },
    });
  });

  test('when a counter fails, then the request fails with that error, without going on or counting a refusal or a use', async () => {
    const { send, limited, admitted, minute, month } = setUp({ default: plan('default', 600, null), metered: plan('metered', 600, 100) });
    const failure = new Error('Redis is away');
    minute.production.state.failing = failure;
    expect((await send({ accountId: '7', plan: 'metered' })).outcome).toEqual({ next: 0, error: failure });
    minute.production.state.failing = undefined;
    month.failing = failure;
    expect((await send({ accountId: '7', plan: 'metered' })).outcome).toEqual({ next: 0, error: failure });
    expect(limited).toEqual([]);
    expect(admitted).toEqual([]);
  });
});
