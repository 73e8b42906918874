import { ident, type Database } from '../db/database';
import type { AccountUsageLedger } from './account-usage-ledger';
import { KEYS_SCHEMA } from './migrations';
import { monthOf, nextMonthStart } from './month';
import type { PlanBook } from './plans';

/** What an account may spend under its plan, and what it has spent this month: what its owner sees in the portal. */
export interface AccountPlanUsage {
  plan: string;
  /** Per environment, shared by all of the account's keys. */
  requestsPerMinute: number;
  /** Both environments together; null: no monthly quota. */
  requestsPerMonth: number | null;
  /** The calendar month (UTC) counted, `YYYY-MM`. */
  month: string;
  /** Requests admitted this month: the usage table, plus this process's counts not written yet. */
  requestsThisMonth: number;
  /** The first instant of the next month (UTC), when the count starts again. */
  monthEndsAt: Date;
}

export interface PlanUsage {
  /** The account's plan and this month's usage; null for an account that does not exist (any more). */
  of(accountId: number): Promise<AccountPlanUsage | null>;
}

export function createPlanUsage({ db, plans, usage, now }: { db: Database; plans: Pick<PlanBook, 'get'>; usage: Pick<AccountUsageLedger, 'readWithUnwritten'>; now: () => Date }): PlanUsage {
  const schema = ident(KEYS_SCHEMA);
  return {
    async of(accountId) {
      const at = now();
      const month = monthOf(at);
      const { result, unwritten } = await usage.readWithUnwritten(() =>
        db.query<{ plan: string; requests: string | number }>(
          `SELECT a.plan, COALESCE(u.requests, 0) AS requests
           FROM ${schema}.accounts a LEFT JOIN ${schema}.account_usage_months u ON u.account_id = a.id AND u.month = $2::date
           WHERE a.id = $1`,
          [accountId, month],
        ),
      );
      const [row] = result;
      if (!row) return null;
      const plan = plans.get(row.plan);
      return {
        plan: row.plan,
        requestsPerMinute: plan.requestsPerMinute,
        requestsPerMonth: plan.requestsPerMonth,
        month: month.slice(0, 7),
        requestsThisMonth: Number(row.requests) + unwritten(String(accountId), month),
        monthEndsAt: nextMonthStart(at),
      };
    },
  };
}
