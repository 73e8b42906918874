import type { Database } from '../../db/database';
import { createKeyUsageLedger, type KeyUsageLedger } from '../../identity/key-usage-ledger';
import { migrateKeys } from '../../identity/migrations';
import { createTestDatabase, insertAccount, insertKeys, type TestDatabase } from '../support/databases';

/**
 * Two gateway processes flush per-key usage into one api_keys table: each flush must lock its
 * rows in the same order as the other's, or two flushes of the same keys deadlock and one is
 * lost to a retry. PostgreSQL only: PGlite has one connection and one process.
 */
describe('key usage ledger flushed by two processes on PostgreSQL', () => {
  const KEYS = 2000;
  let testDb: TestDatabase;
  let first: Database;
  let second: Database;
  const ids = Array.from({ length: KEYS }, (_, i) => `key_${String(i).padStart(5, '0')}`);

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    first = await testDb.open();
    second = await testDb.open();
    await migrateKeys(first);
    await insertKeys(first, await insertAccount(first), ids);
  });
  afterAll(async () => {
    await first.close();
    await second.close();
    await testDb.destroy();
  });

  const ledgerOn = (db: Database, errors: unknown[]): KeyUsageLedger =>
    createKeyUsageLedger({ db, table: 'accounts.api_keys', now: () => new Date(), flushIntervalMs: 60_000, onFlushError: (err) => errors.push(err) });

  test('when both flush the same keys at once, first used in opposite orders, then no flush fails and every use is counted', async () => {
    const errors: unknown[] = [];
    const ascending = ledgerOn(first, errors);
    const descending = ledgerOn(second, errors);
    const rounds = 5;
    const failures: unknown[] = [];
    try {
      for (let round = 0; round < rounds; round++) {
        for (const id of ids) ascending.recordUse(id, false);
        for (let i = ids.length - 1; i >= 0; i--) descending.recordUse(ids[i]!, false);
        const flushed = await Promise.allSettled([ascending.flush(), descending.flush()]);
        for (const result of flushed) if (result.status === 'rejected') failures.push(result.reason);
      }
    } finally {
      await Promise.all([ascending.close(), descending.close()]);
    }
    expect(failures.map(String)).toEqual([]);
    expect(errors.map(String)).toEqual([]);
    const counts = await first.query<{ requests: string }>(`SELECT requests::text FROM accounts.api_keys WHERE id = ANY($1) GROUP BY requests`, [ids]);
    expect(counts).toEqual([{ requests: String(rounds * 2) }]);
  });

  test("when another transaction holds a foreign-key check's lock on a key row, then the flush does not wait for it", async () => {
    // What inserting a key_usage_days row for the key takes (the daily-usage flush), in another order than key order.
    const errors: unknown[] = [];
    const ledger = ledgerOn(first, errors);
    try {
      ledger.recordUse(ids[0]!, false);
      const outcome = await second.transaction(async (tx) => {
        await tx.query(`SELECT 1 FROM accounts.api_keys WHERE id = $1 FOR KEY SHARE`, [ids[0]]);
        let timer: NodeJS.Timeout | undefined;
        const waited = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('waited'), 2000)));
        const result = await Promise.race([ledger.flush().then(() => 'flushed'), waited]);
        clearTimeout(timer);
        return result;
      });
      expect(outcome).toBe('flushed');
    } finally {
      await ledger.close();
    }
    expect(errors).toEqual([]);
  });
});
