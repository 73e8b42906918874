import type { Database } from '../../db/database';
import { createAccountAdmin, type AccountAdmin } from '../../identity/account-admin';
import { createAuditLog } from '../../identity/audit-log';
import { dayNumber } from '../../identity/daily-usage';
import { createDailyUsageService, type DailyUsageService } from '../../identity/daily-usage-service';
import { migrateKeys } from '../../identity/migrations';
import { createPlanService, type PlanService } from '../../identity/plans';
import { createLocalRevocationBus } from '../../identity/revocation-bus';
import { createTestDatabase, insertAccount, insertKeys, type TestDatabase } from '../support/databases';
import { until } from '../support/until';

const ADMIN = { actor: 'admin:ops', requestId: 'req-erase' } as const;
const noop = () => {};
const NOW = Date.parse('2026-11-29T12:00:00Z');

/**
 * An erase while a gateway process writes the same account's usage. A usage write locks its day
 * (or month) rows first and, at its statement's end, the keys and account its new rows name; an
 * erase must take the rows in that order too, or the two deadlock and PostgreSQL aborts one a
 * second later. The database orders text by en-US, as most hosted servers do, not by the test
 * servers' C. PostgreSQL only: PGlite has one connection and one process.
 */
describe('erasing an account while its usage is written, on PostgreSQL', () => {
  let testDb: TestDatabase;
  let db: Database;
  let writer: Database;
  let plans: PlanService;
  let accounts: AccountAdmin;
  let usage: DailyUsageService;

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres', { icuLocale: 'en-US' });
    db = await testDb.open();
    writer = await testDb.open();
    await migrateKeys(db);
    const bus = createLocalRevocationBus();
    const audit = createAuditLog({ db });
    plans = await createPlanService({ db, bus, audit, defaultRequestsPerMinute: 600, now: () => new Date() });
    accounts = createAccountAdmin({ db, audit, plans, bus, now: () => new Date() });
    usage = createDailyUsageService({ db, nowMs: () => NOW, flushIntervalMs: 60_000 });
  });

  afterAll(async () => {
    plans?.close();
    await usage?.close();
    await writer?.close();
    await db?.close();
    await testDb?.destroy();
  });

  type Statement = [sql: string, params: unknown[]];

  /** Resolves once `count` sessions of the test database wait for a lock. */
  const waiting = (count: number) =>
    until(`${count} sessions waiting for a lock`, async () => {
      const [row] = await writer.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return row!.waiting >= count;
    });

  /**
   * Runs `hold` in a transaction on the writer's connection; starts each of `calls` once the one
   * before it waits for a lock; then runs `then` in the same transaction and commits. Resolves
   * with each outcome (its value, 'fulfilled' for none, or the error's text), the transaction's first.
   */
  async function whileHeld(hold: Statement, calls: Array<() => Promise<unknown>>, then?: Statement): Promise<unknown[]> {
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const write = writer.transaction(async (tx) => {
      await tx.query(...hold);
      holding();
      await released;
      if (then) await tx.query(...then);
    });
    await Promise.race([held, write]);
    const started: Array<Promise<unknown>> = [write];
    // Released whatever happens: a write left open would hold its connection past the test.
    try {
      for (const call of calls) {
        const running = call();
        started.push(running);
        // Or it ended without waiting, and the outcomes say so.
        await Promise.race([waiting(started.length - 1), running.then(noop, noop)]);
      }
    } finally {
      release();
    }
    const outcomes = await Promise.allSettled(started);
    return outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : (o.value ?? o.status)));
  }

  const erase = (accountId: number) => () => accounts.erase(accountId, null, ADMIN);

  /** Two keys of a new account whose ids JavaScript orders one way ("B" first) and en-US, as the erase locks them, the other. */
  async function keysOrderedApart(): Promise<{ accountId: number; upper: string; lower: string }> {
    const accountId = await insertAccount(db);
    const [upper, lower] = [`erase_B_${accountId}`, `erase_a_${accountId}`];
    await insertKeys(db, accountId, [upper, lower]);
    return { accountId, upper, lower };
  }

  /** Inserts one day row `daysAgo` before NOW for each key, in the order given. */
  const insertDays = (accountId: number, keyIds: string[], daysAgo: number) =>
    db.query(`INSERT INTO accounts.key_usage_days (key_id, account_id, day, ok) SELECT id, $2, DATE '1970-01-01' + $3::int, 1 FROM unnest($1::text[]) WITH ORDINALITY AS k(id, n) ORDER BY n`, [
      keyIds,
      accountId,
      dayNumber(NOW) - daysAgo,
    ]);

  test('when a daily-usage write holds one key\'s day and then adds another key\'s first day, then it and the erase both succeed', async () => {
    const accountId = await insertAccount(db);
    await insertKeys(db, accountId, [`erase_a_${accountId}`, `erase_b_${accountId}`]);
    await db.query(`INSERT INTO accounts.key_usage_days (key_id, account_id, day, ok) VALUES ($1, $2, '2026-11-28', 1)`, [`erase_a_${accountId}`, accountId]);

    const outcomes = await whileHeld(
      [`UPDATE accounts.key_usage_days SET ok = ok + 1 WHERE key_id = $1`, [`erase_a_${accountId}`]],
      [erase(accountId)],
      [`INSERT INTO accounts.key_usage_days (key_id, account_id, day, ok) VALUES ($1, $2, '2026-11-29', 1)`, [`erase_b_${accountId}`, accountId]],
    );

    expect(outcomes).toEqual(['fulfilled', { keyIds: [`erase_a_${accountId}`, `erase_b_${accountId}`] }]);
    expect(await db.query(`SELECT key_id FROM accounts.key_usage_days WHERE account_id = $1`, [accountId])).toEqual([]);
    expect(await db.query(`SELECT id FROM accounts.api_keys WHERE account_id = $1`, [accountId])).toEqual([]);
  });

  test('when a month-usage write holds one month and then adds the next, then it and the erase both succeed', async () => {
    const accountId = await insertAccount(db);
    await db.query(`INSERT INTO accounts.account_usage_months (account_id, month, requests) VALUES ($1, '2026-10-01', 5)`, [accountId]);

    const outcomes = await whileHeld(
      [`UPDATE accounts.account_usage_months SET requests = requests + 1 WHERE account_id = $1 AND month = '2026-10-01'`, [accountId]],
      [erase(accountId)],
      [`INSERT INTO accounts.account_usage_months (account_id, month, requests) VALUES ($1, '2026-11-01', 1)`, [accountId]],
    );

    expect(outcomes).toEqual(['fulfilled', { keyIds: [] }]);
    expect(await db.query(`SELECT month FROM accounts.account_usage_months WHERE account_id = $1`, [accountId])).toEqual([]);
  });

  test('when a daily flush adds to two keys that JavaScript and the database order differently, and waits for the first, then it and the erase both succeed', async () => {
    const { accountId, upper, lower } = await keysOrderedApart();
    await insertDays(accountId, [upper, lower], 0);
    usage.record(upper, 200);
    usage.record(lower, 200);

    const outcomes = await whileHeld([`SELECT 1 FROM accounts.key_usage_days WHERE key_id = $1 FOR UPDATE`, [upper]], [usage.flush, erase(accountId)]);

    expect(outcomes).toEqual(['fulfilled', 'fulfilled', { keyIds: [lower, upper] }]);
    expect(await db.query(`SELECT key_id FROM accounts.key_usage_days WHERE account_id = $1`, [accountId])).toEqual([]);
  });

  test('when the purge of old days waits for the first of two of the account\'s old days, then it and the erase both succeed', async () => {
    const { accountId, upper, lower } = await keysOrderedApart();
    await insertDays(accountId, [upper, lower], 500);

    const outcomes = await whileHeld([`SELECT 1 FROM accounts.key_usage_days WHERE key_id = $1 FOR UPDATE`, [upper]], [usage.purge, erase(accountId)]);

    expect(outcomes).toEqual(['fulfilled', 2, { keyIds: [lower, upper] }]);
    expect(await db.query(`SELECT key_id FROM accounts.key_usage_days WHERE account_id = $1`, [accountId])).toEqual([]);
  });
});
