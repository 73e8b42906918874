import { createAuditLog } from '../../identity/audit-log';
import { createApiKeyService, type ApiKeyService } from '../../identity/api-key-service';
import { createDailyUsageService, type DailyUsageService } from '../../identity/daily-usage-service';
import { migrateKeys } from '../../identity/migrations';
import { createLocalRevocationBus } from '../../identity/revocation-bus';
import { createTestDatabase, insertAccount, testDatabaseKinds, watchedDatabase, type TestDatabase } from '../support/databases';
import { refusal } from '../support/refusal';
import { until } from '../support/until';

const HASH_SECRET = 'test-hash-secret-0123456789abcdefghijklmnop';
const DAY_MS = 24 * 60 * 60 * 1000;
const NONE = { ok: 0, clientErrors: 0, rateLimited: 0, serverErrors: 0 };

/** The first word of each statement: its kind (INSERT, SELECT). */
const kinds = (statements: string[]) => statements.map((sql) => sql.trim().split(/\s+/)[0]!);

const expectApiError = async (promise: Promise<unknown>, code: string, message: string) => {
  expect((await refusal(promise)).toBody()).toEqual({ code, message, status: code === 'not_found' ? 404 : 400 });
};

describe.each(testDatabaseKinds())('daily usage service on %s', (kind) => {
  let testDb: TestDatabase;
  let db: ReturnType<typeof watchedDatabase>;
  let keys: ApiKeyService;
  let clock: number;
  let usage: DailyUsageService;

  const newService = () => createDailyUsageService({ db, nowMs: () => clock, flushIntervalMs: 60_000 });
  const newKey = async (accountId: number, name = 'k') => (await keys.issue(accountId, { name })).id;
  const storedDays = (keyId: string) =>
    db.query<{ day: string; ok: string; client_errors: string; rate_limited: string; server_errors: string; account_id: string }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, ok, client_errors, rate_limited, server_errors, account_id FROM accounts.key_usage_days WHERE key_id = $1 ORDER BY day`,
      [keyId],
    );

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    db = watchedDatabase(await testDb.open());
    await migrateKeys(db);
    keys = createApiKeyService({ db, audit: createAuditLog({ db }), hashSecret: HASH_SECRET, revocations: createLocalRevocationBus() });
  });

  beforeEach(() => {
    clock = Date.parse('2026-11-25T12:00:00.000Z');
    db.down = false;
    usage = newService();
  });

  afterEach(() => usage.close());

  afterAll(async () => {
    await keys.close();
    await db.close();
    await testDb.destroy();
  });

  test('when responses of every class are recorded, then nothing is written until the flush, which is one INSERT adding them to today', async () => {
    const accountId = await insertAccount(db);
    const keyId = await newKey(accountId);
    const before = db.statements.length;
    for (const status of [200, 201, 304, 400, 404, 401, 429, 429, 429, 500, 503]) usage.record(keyId, status);
    expect(db.statements.length).toBe(before);
    await usage.flush();
    expect(kinds(db.statements.slice(before))).toEqual(['INSERT']);
    const rows = await storedDays(keyId);
    expect(rows.map((r) => [r.day, ...[r.ok, r.client_errors, r.rate_limited, r.server_errors, r.account_id].map(Number)])).toEqual([['2026-11-25', 3, 3, 3, 2, accountId]]);
    await usage.flush();
    expect(db.statements.length).toBe(before + 2); // the SELECT above; an empty flush sends nothing
  });

  test('when a key is read before and after the flush, then the days show the same counts, zero days filled, oldest first', async () => {
    const accountId = await insertAccount(db);
    const keyId = await newKey(accountId);
    usage.record(keyId, 200);
    usage.record(keyId, 404);
    const expected = [
      { day: '2026-11-23', ...NONE },
      { day: '2026-11-24', ...NONE },
      { day: '2026-11-25', ...NONE, ok: 1, clientErrors: 1 },
    ];
    expect(await usage.forKey(accountId, keyId, 3)).toEqual(expected);
    await usage.flush();
    expect(await usage.forKey(accountId, keyId, 3)).toEqual(expected);
    usage.record(keyId, 500);
    expect((await usage.forKey(accountId, keyId, 3))[2]).toEqual({ day: '2026-11-25', ...NONE, ok: 1, clientErrors: 1, serverErrors: 1 });
    const month = await usage.forKey(accountId, keyId, 30);
    expect(month).toHaveLength(30);
    expect([month[0]!.day, month[29]!.day]).toEqual(['2026-10-27', '2026-11-25']);
  });

  test('when the clock passes midnight UTC between two responses before a flush, then each is counted on its own day', async () => {
    const accountId = await insertAccount(db);
    const keyId = await newKey(accountId);
    clock = Date.parse('2026-11-25T23:59:59.999Z');
    usage.record(keyId, 200);
    clock = Date.parse('2026-11-26T00:00:00.000Z');
    usage.record(keyId, 429);
    usage.record(keyId, 200);
    const expected = [
      { day: '2026-11-25', ...NONE, ok: 1 },
      { day: '2026-11-26', ...NONE, ok: 1, rateLimited: 1 },
    ];
    expect(await usage.forKey(accountId, keyId, 2)).toEqual(expected);
    await usage.flush();
    expect((await storedDays(keyId)).map((r) => [r.day, Number(r.ok), Number(r.rate_limited)])).toEqual([
      ['2026-11-25', 1, 0],
      ['2026-11-26', 1, 1],
    ]);
    expect(await usage.forKey(accountId, keyId, 2)).toEqual(expected);
    // A day later the window has moved on: yesterday's 429 is the older of two days shown.
    clock += DAY_MS;
    expect((await usage.forKey(accountId, keyId, 2)).map((d) => d.day)).toEqual(['2026-11-26', '2026-11-27']);
  });

  test('when two services share the database, then their flushes add up', async () => {
    const other = newService();
    const accountId = await insertAccount(db);
    const keyId = await newKey(accountId);
    usage.record(keyId, 200);
    other.record(keyId, 200);
    other.record(keyId, 503);
    await Promise.all([usage.flush(), other.flush()]);
    usage.record(keyId, 200);
    other.record(keyId, 200);
    await Promise.all([other.flush(), usage.flush()]);
    expect(await newService().forKey(accountId, keyId, 1)).toEqual([{ day: '2026-11-25', ...NONE, ok: 4, serverErrors: 1 }]);
    await other.close();
  });

  test('when a flush fails, then its counts are kept, merged with later ones, shown by reads and written by the next flush', async () => {
    const accountId = await insertAccount(db);
    const keyId = await newKey(accountId);
    usage.record(keyId, 200);
    db.down = true;
    await expect(usage.flush()).rejects.toThrow('connection terminated unexpectedly');
    usage.record(keyId, 200);
    usage.record(keyId, 400);
    expect(await usage.forKey(accountId, keyId, 1)).toEqual([{ day: '2026-11-25', ...NONE, ok: 2, clientErrors: 1 }]);
    expect(await storedDays(keyId)).toEqual([]);
    db.down = false;
    await usage.flush();
    expect((await storedDays(keyId)).map((r) => [Number(r.ok), Number(r.client_errors)])).toEqual([[2, 1]]);
    expect(await usage.forKey(accountId, keyId, 1)).toEqual([{ day: '2026-11-25', ...NONE, ok: 2, clientErrors: 1 }]);
  });

  test('when a background flush fails, then it is reported and retried on the next interval without being asked', async () => {
    const errors: unknown[] = [];
    const timed = createDailyUsageService({
      db,
      nowMs: () => clock,
      flushIntervalMs: 20,
      onFlushError: (err) => {
        errors.push(err);
        db.down = false;
      },
    });
    const accountId = await insertAccount(db);
    const keyId = await newKey(accountId);
    db.down = true;
    timed.record(keyId, 200);
    await until('the retry to write the day', async () => (await storedDays(keyId)).length > 0, 5000);
    expect(errors).toEqual([new Error('connection terminated unexpectedly')]);
    expect((await storedDays(keyId)).map((r) => Number(r.ok))).toEqual([1]);
    await timed.close();
  });

  test('when the service closes, then pending counts are written', async () => {
    const closing = newService();
    const accountId = await insertAccount(db);
    const keyId = await newKey(accountId);
    closing.record(keyId, 201);
    await closing.close();
    expect((await storedDays(keyId)).map((r) => Number(r.ok))).toEqual([1]);
  });

  test('when a key is gone (its account erased) before the flush, then the others are written and the flush succeeds', async () => {
    const gone = await insertAccount(db);
    const kept = await insertAccount(db);
    const goneKey = await newKey(gone);
    const keptKey = await newKey(kept);
    usage.record(goneKey, 200);
    usage.record(keptKey, 200);
    await db.query('DELETE FROM accounts.accounts WHERE id = $1', [gone]);
    await usage.flush();
    expect((await storedDays(keptKey)).map((r) => Number(r.ok))).toEqual([1]);
    expect(await storedDays(goneKey)).toEqual([]);
  });

  test("when another account's, an unknown or a malformed key id is asked for, then it is not_found", async () => {
    const owner = await insertAccount(db);
    const stranger = await insertAccount(db);
    const keyId = await newKey(owner);
    usage.record(keyId, 200);
    const message = 'No API key with this id exists in your account.';
    await expectApiError(usage.forKey(stranger, keyId, 30), 'not_found', message);
    await expectApiError(usage.forKey(owner, 'key_AAAAAAAAAAAAAAAA', 30), 'not_found', message);
    await expectApiError(usage.forKey(owner, 'key_\u0000', 30), 'not_found', message);
    await expectApiError(usage.forKey(owner, 'x'.repeat(10_000), 30), 'not_found', message);
  });

  test('when days is out of 1 to 90, then it is an invalid_request naming days', async () => {
    const accountId = await insertAccount(db);
    const keyId = await newKey(accountId);
    for (const days of [0, 91, 1.5, -1, NaN]) {
      await expectApiError(usage.forKey(accountId, keyId, days), 'invalid_request', 'days must be a whole number from 1 to 90.');
      await expectApiError(usage.forAccount(accountId, days), 'invalid_request', 'days must be a whole number from 1 to 90.');
    }
    expect(await usage.forKey(accountId, keyId, 90)).toHaveLength(90);
    expect(await usage.forAccount(accountId, 1)).toHaveLength(1);
  });

  test("when an account is read, then its keys' days are summed, written or not, and other accounts' keys are left out", async () => {
    const accountId = await insertAccount(db);
    const other = await insertAccount(db);
    const a = await newKey(accountId, 'a');
    const b = await newKey(accountId, 'b');
    const stranger = await newKey(other, 'stranger');
    clock -= DAY_MS;
    usage.record(a, 200);
    await usage.flush();
    clock += DAY_MS;
    usage.record(a, 200);
    usage.record(b, 429);
    usage.record(stranger, 500);
    await usage.flush();
    usage.record(b, 404);
    expect(await usage.forAccount(accountId, 3)).toEqual([
      { day: '2026-11-23', ...NONE },
      { day: '2026-11-24', ...NONE, ok: 1 },
      { day: '2026-11-25', ...NONE, ok: 1, clientErrors: 1, rateLimited: 1 },
    ]);
    expect(await usage.forAccount(other, 1)).toEqual([{ day: '2026-11-25', ...NONE, serverErrors: 1 }]);
    expect(await usage.forAccount(await insertAccount(db), 2)).toEqual([
      { day: '2026-11-24', ...NONE },
      { day: '2026-11-25', ...NONE },
    ]);
  });

  test('when days older than 400 are purged, then they are deleted and the 400 latest stay', async () => {
    const accountId = await insertAccount(db);
    const keyId = await newKey(accountId);
    const today = clock;
    for (const daysAgo of [400, 399, 0]) {
      clock = today - daysAgo * DAY_MS;
      usage.record(keyId, 200);
    }
    await usage.flush();
    clock = today;
    expect(await usage.purge()).toBe(1);
    expect((await storedDays(keyId)).map((r) => r.day)).toEqual(['2025-10-22', '2026-11-25']);
    expect(await usage.purge()).toBe(0);
  });
});
