import { openDatabase } from '../../db/open-database';
import { migrateKeys } from '../../identity/migrations';
import { createPasswordHasher } from '../../identity/password';
import { BENCH_PASSWORD } from './portal-keys';

export const OVER_LIMIT_EMAIL = 'soak-over-limit@example.com';
const OVER_LIMIT_PLAN = 'soak-over-limit';

/**
 * The account whose key sends twice its budget, made in the gateway's store before it starts: an
 * account's keys share one budget, so it needs an account of its own, on a plan with the small
 * budget (plans are set by an operator; the soak has no admin API to ask). The other keys' account
 * signs up as usual, on the default plan (RATE_LIMIT_PER_MINUTE).
 */
export async function createOverLimitAccount(dataDir: string, requestsPerMinute: number): Promise<void> {
  const db = await openDatabase({ dataDir });
  try {
    await migrateKeys(db);
    await db.query(`INSERT INTO accounts.plans (name, requests_per_minute, set_by) VALUES ($1, $2, 'admin')`, [OVER_LIMIT_PLAN, requestsPerMinute]);
    const passwordHash = await createPasswordHasher().hash(BENCH_PASSWORD);
    await db.query(`INSERT INTO accounts.accounts (email, password_hash, plan) VALUES ($1, $2, $3)`, [OVER_LIMIT_EMAIL, passwordHash, OVER_LIMIT_PLAN]);
  } finally {
    await db.close();
  }
}
