import { createAccountUsageLedger, type AccountUsageLedger } from '../../identity/account-usage-ledger';
import { migrateKeys } from '../../identity/migrations';
import { createTestDatabase, insertAccount, testDatabaseKinds, watchedDatabase, type TestDatabase } from '../support/databases';
import { until } from '../support/until';

describe.each(testDatabaseKinds())('account usage ledger on %s', (kind) => {
  let testDb: TestDatabase;
  let db: ReturnType<typeof watchedDatabase>;
  let now: number;
  const open: AccountUsageLedger[] = [];

  const ledger = (flushIntervalMs = 60_000, onFlushError: (err: unknown) => void = () => {}) => {
    const created = createAccountUsageLedger({ db, clock: () => now, flushIntervalMs, onFlushError });
    open.push(created);
    return created;
  };
  const record = (usage: AccountUsageLedger, accountId: number, times: number) => {
    for (let i = 0; i < times; i++) usage.recordAdmitted(String(accountId));
  };
  const stored = async (accountId: number) =>
    (await db.query<{ month: string | Date; requests: string | number }>(`SELECT month::text AS month, requests FROM accounts.account_usage_months WHERE account_id = $1 ORDER BY month`, [accountId])).map(
      (row) => [String(row.month), Number(row.requests)],
    );

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    db = watchedDatabase(await testDb.open());
    await migrateKeys(db);
  });
  beforeEach(() => {
    now = Date.UTC(2026, 10, 15, 12);
    db.down = false;
  });
  afterEach(async () => {
    db.down = false;
    await Promise.all(open.splice(0).map((l) => l.close()));
  });
  afterAll(async () => {
    await db.close();
    await testDb.destroy();
  });

  test('when requests are recorded, then nothing is written until the flush, which is one statement adding them per account and month', async () => {
    const usage = ledger();
    const [a, b] = [await insertAccount(db), await insertAccount(db)];
    const before = db.statements.length;
    record(usage, a, 120);
    record(usage, b, 3);
    expect(db.statements.length).toBe(before);
    await usage.flush();
    expect(db.statements.length).toBe(before + 1);
    expect(await stored(a)).toEqual([['2026-11-01', 120]]);
    expect(await stored(b)).toEqual([['2026-11-01', 3]]);
    record(usage, a, 5);
    await usage.flush();
    expect(await stored(a)).toEqual([['2026-11-01', 125]]);
    const idle = db.statements.length;
    await usage.flush();
    expect(db.statements.length).toBe(idle); // nothing pending, nothing written
  });

  test('when the month changes between flushes, then each request counts in the month (UTC) it was admitted in', async () => {
    const usage = ledger();
    const account = await insertAccount(db);
    now = Date.UTC(2026, 10, 30, 23, 59, 59, 999);
    record(usage, account, 2);
    now = Date.UTC(2026, 11, 1);
    record(usage, account, 3);
    await usage.flush();
    expect(await stored(account)).toEqual([
      ['2026-11-01', 2],
      ['2026-12-01', 3],
    ]);
  });

  test('when two ledgers share the database and flush at once, then their counts add up', async () => {
    const [first, second] = [ledger(), ledger()];
    const account = await insertAccount(db);
    record(first, account, 7);
    record(second, account, 11);
    await Promise.all([first.flush(), second.flush()]);
    expect(await stored(account)).toEqual([['2026-11-01', 18]]);
  });

  test('when a flush fails, then its counts are kept and written with the later ones by the next flush, once', async () => {
    const failures: unknown[] = [];
    const usage = ledger(50, (err) => failures.push(err));
    const account = await insertAccount(db);
    record(usage, account, 4);
    db.down = true;
    await expect(usage.flush()).rejects.toThrow('connection terminated unexpectedly');
    record(usage, account, 2);
    expect(await usage.requestsInMonth(String(account), '2026-11-01')).toBe(6);
    db.down = false;
    // The failed batch schedules a retry of its own.
    await until('the retry to write the counts', async () => (await stored(account)).length > 0, 5000);
    expect(await stored(account)).toEqual([['2026-11-01', 6]]);
    expect(failures).toEqual([]);
    await usage.flush();
    expect(await stored(account)).toEqual([['2026-11-01', 6]]);
  });

  test('when an account is erased before its counts are written, then the others are written and its own are dropped', async () => {
    const usage = ledger();
    const [kept, erased] = [await insertAccount(db), await insertAccount(db)];
    record(usage, kept, 2);
    record(usage, erased, 9);
    await db.query('DELETE FROM accounts.accounts WHERE id = $1', [erased]);
    await usage.flush();
    expect(await stored(kept)).toEqual([['2026-11-01', 2]]);
    expect(await stored(erased)).toEqual([]);
  });

  test('when a month is read, then stored and unwritten counts are added, never twice, whenever the flushes run', async () => {
    const usage = ledger();
    const account = await insertAccount(db);
    const id = String(account);
    record(usage, account, 3);
    expect(await usage.requestsInMonth(id, '2026-11-01')).toBe(3);
    await usage.flush();
    record(usage, account, 1);
    // A read and a flush started together: the read sees the count once.
    const [read] = await Promise.all([usage.requestsInMonth(id, '2026-11-01'), usage.flush()]);
    expect(read).toBe(4);
    expect(await usage.requestsInMonth(id, '2026-11-01')).toBe(4);
    expect(await usage.requestsInMonth(id, '2026-10-01')).toBe(0);
  });

  test('when the flush interval passes, then pending counts are written without being asked; when the ledger closes, then the rest is written', async () => {
    const usage = ledger(30);
    const account = await insertAccount(db);
    record(usage, account, 2);
    await until('the timer to write the counts', async () => (await stored(account)).length > 0, 5000);
    expect(await stored(account)).toEqual([['2026-11-01', 2]]);
    const closing = ledger();
    record(closing, account, 5);
    await closing.close();
    expect(await stored(account)).toEqual([['2026-11-01', 7]]);
  });
});
