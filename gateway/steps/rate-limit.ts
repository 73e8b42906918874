import { ApiError } from '../../lib/api-error';
import { nextMonthStart } from '../../identity/month';
import type { Plan, PlanBook } from '../../identity/plans';
import type { BudgetLeases } from '../rate-limit/budget-leases';
import { createPlanPolicies, MINUTE_WINDOW_SECONDS, MONTH_POLICY, rateLimitField } from '../rate-limit/plan-policies';
import { fieldOf, rateLimited } from '../rate-limit/rate-limit-headers';
import type { RateDecision } from '../rate-limit/rate-limiter';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { GatewayRequest, Next, Step } from '../pipeline/pipeline';

/** Counts the requests the limits admitted, per account and month (the usage ledger); it must not block. */
export interface AdmittedRecorder {
  /** `now`: the clock (epoch ms) as the step read it. */
  recordAdmitted(accountId: string, now: number): void;
}

export interface AccountLimitsOptions {
  /** The plans in memory, reloaded on every change: an account's limits are its plan's now. */
  plans: Pick<PlanBook, 'get'>;
  /** This environment's per-minute budgets, by account id (production and staging are budgeted apart). */
  minute: BudgetLeases;
  /** The monthly quotas, by account id, shared by both environments. */
  month: BudgetLeases;
  usage: AdmittedRecorder;
  /** Epoch ms, the clock the monthly quota counts by: the month in `RateLimit-Policy` and when the quota renews. */
  clock: () => number;
  metrics: Pick<GatewayMetrics, 'rateLimited'>;
}

function quotaRefusal(plan: Plan, decision: RateDecision, now: number): ApiError {
  const renewsAt = nextMonthStart(new Date(now)).toISOString().replace('.000Z', 'Z');
  return new ApiError('quota_exceeded', `Monthly quota of ${plan.requestsPerMonth} requests exceeded; it renews at ${renewsAt}, in ${decision.resetSeconds} s.`, {
    headers: { 'Retry-After': String(decision.resetSeconds) },
  });
}

/**
 * The account's plan limits, after authentication and before validation: the per-minute budget
 * of its keys in this environment, then its monthly quota. A quota this process already knows is
 * spent refuses at once, spending no minute budget; a request the minute refuses spends no quota.
 * Admitted requests are counted per account and month. `RateLimit-Policy` names every policy of
 * the plan, `RateLimit` the one nearest exhaustion.
 */
export function rateLimitPerAccount({ plans, minute, month, usage, clock, metrics }: AccountLimitsOptions): Step {
  const policyOf = createPlanPolicies();

  const refuseSpentQuota = (req: GatewayRequest, plan: Plan, perMonth: RateDecision, now: number): never => {
    req.ctx.headers.set('RateLimit-Policy', policyOf(plan, now));
    req.ctx.headers.set('RateLimit', fieldOf(MONTH_POLICY, perMonth));
    metrics.rateLimited('quota');
    throw quotaRefusal(plan, perMonth, now);
  };

  /** `now`: one reading of the clock for the request's month, its policy and its count. */
  const decide = (req: GatewayRequest, next: Next, plan: Plan, perMinute: RateDecision, perMonth: RateDecision | undefined, now: number): void => {
    const headers = req.ctx.headers;
    headers.set('RateLimit-Policy', policyOf(plan, now));
    headers.set('RateLimit', rateLimitField(perMinute, perMonth));
    if (!perMinute.allowed) {
      metrics.rateLimited('key');
      throw rateLimited(plan.requestsPerMinute, MINUTE_WINDOW_SECONDS, perMinute);
    }
    if (perMonth && !perMonth.allowed) {
      metrics.rateLimited('quota');
      throw quotaRefusal(plan, perMonth, now);
    }
    usage.recordAdmitted(req.ctx.accountId!, now);
    next();
  };

  const afterMinute = (req: GatewayRequest, next: Next, plan: Plan, perMinute: RateDecision): void | Promise<void> => {
    const quota = plan.requestsPerMonth;
    const now = clock();
    if (quota === null || !perMinute.allowed) return decide(req, next, plan, perMinute, undefined, now);
    const perMonth = month.consume(req.ctx.accountId!, quota, now);
    // A closure only when the quota's tokens must be taken from the counter, not on the hot path.
    if (perMonth instanceof Promise) return perMonth.then((settled) => decide(req, next, plan, perMinute, settled, clock()));
    return decide(req, next, plan, perMinute, perMonth, now);
  };

  return function rateLimitPerAccountStep(req, _res, next) {
    const plan = plans.get(req.ctx.plan!);
    const accountId = req.ctx.accountId!;
    if (plan.requestsPerMonth !== null) {
      const spent = month.refusal(accountId, plan.requestsPerMonth);
      if (spent) return refuseSpentQuota(req, plan, spent, clock());
    }
    const perMinute = minute.consume(accountId, plan.requestsPerMinute);
    // After a round trip the plan is read again: the book may have reloaded it meanwhile.
    if (perMinute instanceof Promise) return perMinute.then((settled) => afterMinute(req, next, plans.get(req.ctx.plan!), settled));
    return afterMinute(req, next, plan, perMinute);
  };
}
