import type { Database } from '../../db/database';
import { openDatabase } from '../../db/open-database';
import { migrateKeys } from '../../identity/migrations';

/**
 * Opens the store a gateway is about to start on (PGlite in its DATA_DIR, or PostgreSQL),
 * migrated, runs `prepare` on it and closes it: how tests set plans before the admin API exists.
 */
export async function prepareStore(settings: { dataDir?: string; databaseUrl?: string }, prepare: (db: Database) => Promise<void>): Promise<void> {
  const db = await openDatabase(settings);
  try {
    await migrateKeys(db);
    await prepare(db);
  } finally {
    await db.close();
  }
}

/** Creates or changes a plan as an admin would (`set_by` admin: RATE_LIMIT_PER_MINUTE no longer shapes it). */
export async function putPlan(db: Database, name: string, requestsPerMinute: number, requestsPerMonth: number | null): Promise<void> {
  await db.query(
    `INSERT INTO accounts.plans (name, requests_per_minute, requests_per_month, set_by) VALUES ($1, $2, $3, 'admin')
     ON CONFLICT (name) DO UPDATE SET requests_per_minute = EXCLUDED.requests_per_minute, requests_per_month = EXCLUDED.requests_per_month, set_by = 'admin', updated_at = now()`,
    [name, requestsPerMinute, requestsPerMonth],
  );
}

/** An account's admitted requests in a month (`YYYY-MM-DD`), as the gateways have written them; 0 without a row. */
export async function storedUsage(db: Database, accountId: number, month: string): Promise<number> {
  const [row] = await db.query<{ requests: string | number }>('SELECT requests FROM accounts.account_usage_months WHERE account_id = $1 AND month = $2::date', [accountId, month]);
  return Number(row?.requests ?? 0);
}
