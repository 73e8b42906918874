import type { Database } from '../../db/database';
import { createAccountAdmin, type AccountAdmin } from '../../identity/account-admin';
import { createAuditLog } from '../../identity/audit-log';
import { migrateKeys } from '../../identity/migrations';
import { createPlanService, type PlanService } from '../../identity/plans';
import { createLocalRevocationBus } from '../../identity/revocation-bus';
import { createTestDatabase, insertAccount, type TestDatabase } from '../support/databases';
import { until } from '../support/until';

const ADMIN = { actor: 'admin:ops', requestId: 'req-erase' } as const;

/**
 * An erase while a gateway process writes the same account's usage. A usage write locks its day
 * (or month) rows first and, at its statement's end, the keys and account its new rows name; an
 * erase must take the rows in that order too, or the two deadlock and PostgreSQL aborts one a
 * second later. PostgreSQL only: PGlite has one connection and one process.
 */
describe('erasing an account while its usage is written, on PostgreSQL', () => {
  let testDb: TestDatabase;
  let db: Database;
  let writer: Database;
  let plans: PlanService;
  let accounts: AccountAdmin;

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    db = await testDb.open();
    writer = await testDb.open();
    await migrateKeys(db);
    const bus = createLocalRevocationBus();
    const audit = createAuditLog({ db });
    plans = await createPlanService({ db, bus, audit, defaultRequestsPerMinute: 600, now: () => new Date() });
    accounts = createAccountAdmin({ db, audit, plans, bus, now: () => new Date() });
  });

  afterAll(async () => {
    plans?.close();
    await writer?.close();
    await db?.close();
    await testDb?.destroy();
  });

  const insertKey = (id: string, accountId: number) =>
    db.query(`INSERT INTO accounts.api_keys (id, account_id, name, environment, prefix, hash) VALUES ($1, $2, 'k', 'production', 'p', encode(sha256(convert_to($1, 'UTF8')), 'hex'))`, [id, accountId]);

  /** Resolves once some session of the test database waits for a row lock. */
  const someoneWaits = () =>
    until('a session waiting for a lock', async () => {
      const [row] = await writer.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return row!.waiting > 0;
    });

  /**
   * Runs `first` in a transaction on the writer's connection, then the erase, then `then` in the
   * same transaction once the erase waits for it: the usage flush's two halves around the erase.
   */
  async function eraseBetween(accountId: number, first: [string, unknown[]], then: [string, unknown[]]) {
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const write = writer.transaction(async (tx) => {
      await tx.query(...first);
      holding();
      await released;
      await tx.query(...then);
    });
    await Promise.race([held, write]);
    const outcomes = Promise.allSettled([write, accounts.erase(accountId, null, ADMIN)]);
    // Released whatever happens: a write left open would hold its connection past the test.
    try {
      await Promise.race([someoneWaits(), outcomes]);
    } finally {
      release();
    }
    return outcomes;
  }

  test('when a daily-usage write holds one key\'s day and then adds another key\'s first day, then it and the erase both succeed', async () => {
    const accountId = await insertAccount(db);
    await insertKey(`erase_a_${accountId}`, accountId);
    await insertKey(`erase_b_${accountId}`, accountId);
    await db.query(`INSERT INTO accounts.key_usage_days (key_id, account_id, day, ok) VALUES ($1, $2, '2026-11-28', 1)`, [`erase_a_${accountId}`, accountId]);

    const outcomes = await eraseBetween(
      accountId,
      [`UPDATE accounts.key_usage_days SET ok = ok + 1 WHERE key_id = $1`, [`erase_a_${accountId}`]],
      [`INSERT INTO accounts.key_usage_days (key_id, account_id, day, ok) VALUES ($1, $2, '2026-11-29', 1)`, [`erase_b_${accountId}`, accountId]],
    );

    expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : o.status))).toEqual(['fulfilled', 'fulfilled']);
    expect(await db.query(`SELECT key_id FROM accounts.key_usage_days WHERE account_id = $1`, [accountId])).toEqual([]);
    expect(await db.query(`SELECT id FROM accounts.api_keys WHERE account_id = $1`, [accountId])).toEqual([]);
  });

  test('when a month-usage write holds one month and then adds the next, then it and the erase both succeed', async () => {
    const accountId = await insertAccount(db);
    await db.query(`INSERT INTO accounts.account_usage_months (account_id, month, requests) VALUES ($1, '2026-10-01', 5)`, [accountId]);

    const outcomes = await eraseBetween(
      accountId,
      [`UPDATE accounts.account_usage_months SET requests = requests + 1 WHERE account_id = $1 AND month = '2026-10-01'`, [accountId]],
      [`INSERT INTO accounts.account_usage_months (account_id, month, requests) VALUES ($1, '2026-11-01', 1)`, [accountId]],
    );

    expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : o.status))).toEqual(['fulfilled', 'fulfilled']);
    expect(await db.query(`SELECT month FROM accounts.account_usage_months WHERE account_id = $1`, [accountId])).toEqual([]);
  });
});
