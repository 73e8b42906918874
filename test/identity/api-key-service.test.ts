import { createAuditLog } from '../../identity/audit-log';
import { createHmac } from 'node:crypto';
import type { Database, Queryable } from '../../db/database';
import { ApiError } from '../../lib/api-error';
import { createTestDatabase, insertAccount, testDatabaseKinds, type TestDatabase } from '../support/databases';
import { createApiKeyService, parseApiKey, type ApiKeyService } from '../../identity/api-key-service';
import { createKeyChurnLimiter, type KeyChurnLimiter } from '../../identity/key-churn-limiter';
import { migrate } from '../../db/migrate';
import { KEYS_SCHEMA, keysMigrations, migrateKeys } from '../../identity/migrations';
import { createLocalRevocationBus, type RevocationBus } from '../../identity/revocation-bus';

const HASH_SECRET = 'test-hash-secret-0123456789abcdefghijklmnop';
const DAY_MS = 24 * 60 * 60 * 1000;

/** The real database, refusing every statement with an UPDATE in it while `down` is set (an outage during a flush). */
function flakyDatabase(db: Database): Database & { down: boolean; refused: number } {
  const flaky = {
    ...db,
    down: false,
    refused: 0,
    query: <R,>(sql: string, params?: readonly unknown[]) => {
      if (flaky.down && /\bUPDATE\b/.test(sql)) {
        flaky.refused++;
        return Promise.reject(new Error('connection terminated unexpectedly'));
      }
      return db.query<R>(sql, params);
    },
  };
  return flaky;
}

/** The real database, failing every INSERT of a key inside a transaction (an outage after the key was counted). */
function failingKeyInserts(db: Database): Database {
  const failing = (tx: Queryable): Queryable => ({
    ...tx,
    query: <R,>(sql: string, params?: readonly unknown[]) =>
      /INSERT INTO \S+api_keys/.test(sql) ? Promise.reject(new Error('could not extend file: No space left on device')) : tx.query<R>(sql, params),
  });
  return { ...db, transaction: (fn) => db.transaction((tx) => fn(failing(tx))) };
}

interface UsageRow {
  requests: number;
  deprecated_calls: number;
  last_used_at: Date | null;
  last_deprecated_call_at: Date | null;
}

/** The real database, with a count of the statements sent to it. */
function countingDatabase(db: Database): Database & { statements: string[] } {
  const statements: string[] = [];
  return {
    ...db,
    statements,
    query: (sql, params) => {
      statements.push(sql);
      return db.query(sql, params);
    },
  };
}

describe.each(testDatabaseKinds())('API key service on %s', (kind) => {
  let testDb: TestDatabase;
  let db: ReturnType<typeof countingDatabase>;
  let bus: RevocationBus;
  let clock: Date;
  let service: ApiKeyService;

  const newAccount = () => insertAccount(db);
  const expectApiError = async (promise: Promise<unknown>, code: string, message?: string) => {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(code);
    if (message) expect((err as ApiError).message).toBe(message);
  };

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    db = countingDatabase(await testDb.open());
    await migrateKeys(db);
  });

  beforeEach(() => {
    clock = new Date('2026-01-01T00:00:00.000Z');
    bus = createLocalRevocationBus();
    service = createApiKeyService({ db, audit: createAuditLog({ db }), hashSecret: HASH_SECRET, revocations: bus, now: () => clock, flushIntervalMs: 60_000 });
  });

  afterEach(() => service.close());

  afterAll(async () => {
    await db.close();
    await testDb.destroy();
  });

  const usageRow = async (keyId: string): Promise<UsageRow | undefined> => {
    const [row] = await db.query<UsageRow>('SELECT requests, deprecated_calls, last_used_at, last_deprecated_call_at FROM accounts.api_keys WHERE id = $1', [keyId]);
    return row && { ...row, last_used_at: row.last_used_at && new Date(row.last_used_at), last_deprecated_call_at: row.last_deprecated_call_at && new Date(row.last_deprecated_call_at) };
  };

  test('when a production key is issued, then it is asg_prod_ plus 43 base64url characters (256 random bits) and its prefix is its visible start', async () => {
    const accountId = await newAccount();
    const issued = await service.issue(accountId, { name: '  CI pipeline  ' });
    expect(issued.key).toMatch(/^asg_prod_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(issued.key.slice('asg_prod_'.length), 'base64url')).toHaveLength(32);
    expect(issued).toEqual({
      id: expect.stringMatching(/^key_[A-Za-z0-9_-]{16}$/),
      name: 'CI pipeline',
      prefix: issued.key.slice(0, 'asg_prod_'.length + 6),
      environment: 'production',
      createdAt: clock,
      expiresAt: null,
      key: issued.key,
    });
    expect(parseApiKey(issued.key)).toEqual({ environment: 'production' });
  });

  test('when a staging key with a lifetime is issued, then it starts asg_stag_ and expires that many days later', async () => {
    const issued = await service.issue(await newAccount(), { name: 'sandbox', environment: 'staging', expiresInDays: 30 });
    expect(issued.key).toMatch(/^asg_stag_[A-Za-z0-9_-]{43}$/);
    expect(issued.prefix).toMatch(/^asg_stag_[A-Za-z0-9_-]{6}$/);
    expect(issued.environment).toBe('staging');
    expect(issued.expiresAt).toEqual(new Date(clock.getTime() + 30 * DAY_MS));
  });

  test('when a key is stored, then the row holds only its HMAC-SHA-256 and visible prefix, never the secret', async () => {
    const issued = await service.issue(await newAccount(), { name: 'stored' });
    const [row] = await db.query<Record<string, unknown>>('SELECT * FROM accounts.api_keys WHERE id = $1', [issued.id]);
    const expectedHash = createHmac('sha256', HASH_SECRET).update(issued.key).digest('hex');
    expect(row!.hash).toBe(expectedHash);
    expect(row!.prefix).toBe(issued.prefix);
    const secretPart = issued.key.slice(issued.prefix.length);
    for (const value of Object.values(row!)) {
      expect(String(value)).not.toContain(issued.key);
      expect(String(value)).not.toContain(secretPart);
    }
  });

  test('when many keys are issued, then keys, ids and prefixes do not repeat and every base64url character appears', async () => {
    const accountId = await newAccount();
    const roomy = createApiKeyService({ db, audit: createAuditLog({ db }), hashSecret: HASH_SECRET, revocations: bus, now: () => clock, maxActiveKeysPerAccount: 100 });
    const issued = await Promise.all(Array.from({ length: 100 }, (_, i) => roomy.issue(accountId, { name: `key ${i}` })));
    await roomy.close();
    expect(new Set(issued.map((k) => k.key)).size).toBe(100);
    expect(new Set(issued.map((k) => k.id)).size).toBe(100);
    expect(new Set(issued.map((k) => k.prefix)).size).toBe(100);
    const alphabet = new Set(issued.flatMap((k) => [...k.key.slice('asg_prod_'.length)]));
    expect(alphabet.size).toBe(64);
  });

  test('when keys are listed, then they come newest first with status and times, and no secret', async () => {
    const accountId = await newAccount();
    const first = await service.issue(accountId, { name: 'first', expiresInDays: 1 });
    clock = new Date(clock.getTime() + 1000);
    const second = await service.issue(accountId, { name: 'second', environment: 'staging' });
    clock = new Date(clock.getTime() + 1000);
    const third = await service.issue(accountId, { name: 'third' });
    await service.revoke(accountId, third.id);
    clock = new Date(first.createdAt.getTime() + 2 * DAY_MS);

    const list = await service.list(accountId);
    const summary = ({ key: _key, ...rest }: typeof first) => rest;
    const unused = { requests: 0, deprecatedCalls: 0, lastDeprecatedCallAt: null };
    expect(list).toEqual([
      { ...summary(third), lastUsedAt: null, revokedAt: third.createdAt, status: 'revoked', expiresSoon: false, rolledTo: null, rolledFrom: null, usage: unused },
      { ...summary(second), lastUsedAt: null, revokedAt: null, status: 'active', expiresSoon: false, rolledTo: null, rolledFrom: null, usage: unused },
      { ...summary(first), lastUsedAt: null, revokedAt: null, status: 'expired', expiresSoon: false, rolledTo: null, rolledFrom: null, usage: unused },
    ]);
    const text = JSON.stringify(list);
    for (const key of [first, second, third]) expect(text).not.toContain(key.key.slice(key.prefix.length));
    expect(await service.list(await newAccount())).toEqual([]);
  });

  test.each([
    ['an empty name', { name: '' }, 'name must be a string of 1 to 100 characters.'],
    ['a blank name', { name: '   ' }, 'name must be a string of 1 to 100 characters.'],
    ['a 101-character name', { name: 'n'.repeat(101) }, 'name must be a string of 1 to 100 characters.'],
    ['a control character in the name', { name: 'bell\u0007' }, 'name must not contain control characters or unpaired surrogates.'],
    ['a NUL in the name', { name: 'nul\u0000' }, 'name must not contain control characters or unpaired surrogates.'],
    ['an unpaired surrogate in the name', { name: 'half\ud800' }, 'name must not contain control characters or unpaired surrogates.'],
    ['a right-to-left override in the name', { name: 'ci\u202Eyek' }, 'name must not contain bidirectional embedding, override or isolate characters.'],
    ['an isolate in the name', { name: '\u2067ci' }, 'name must not contain bidirectional embedding, override or isolate characters.'],
    ['a name of only a zero-width space', { name: '\u200B' }, 'name must contain a visible character, not only spaces and invisible ones.'],
    ['a name of Hangul fillers and joiners among spaces', { name: ' \u3164\u200D \u115F\u2060 ' }, 'name must contain a visible character, not only spaces and invisible ones.'],
    ['an unknown environment', { name: 'ok', environment: 'development' }, 'environment must be "production" or "staging".'],
    ['a lifetime of 0 days', { name: 'ok', expiresInDays: 0 }, 'expiresInDays must be an integer from 1 to 3650.'],
    ['a lifetime of 3651 days', { name: 'ok', expiresInDays: 3651 }, 'expiresInDays must be an integer from 1 to 3650.'],
    ['a fractional lifetime', { name: 'ok', expiresInDays: 1.5 }, 'expiresInDays must be an integer from 1 to 3650.'],
  ])('when issuing with %s, then it is refused with invalid_request', async (_label, input, message) => {
    await expectApiError(service.issue(await newAccount(), input), 'invalid_request', message);
  });

  test('when a key name is spelled in NFD, then it is stored and returned in NFC, and 100 composed characters fit', async () => {
    const accountId = await newAccount();
    const issued = await service.issue(accountId, { name: 'Cafe\u0301 ' + 'e\u0301'.repeat(95) });
    expect(issued.name).toBe('Caf\u00e9 ' + '\u00e9'.repeat(95));
    expect((await service.list(accountId))[0]!.name).toBe(issued.name);
  });

  test('when a key name has 100 characters and the lifetime is 3650 days, then it is accepted', async () => {
    const issued = await service.issue(await newAccount(), { name: 'n'.repeat(100), expiresInDays: 3650 });
    expect(issued.name).toHaveLength(100);
  });

  describe('keys per account', () => {
    const capped = (max: number) => createApiKeyService({ db, audit: createAuditLog({ db }), hashSecret: HASH_SECRET, revocations: bus, now: () => clock, maxActiveKeysPerAccount: max });
    const activeRows = async (accountId: number) =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM accounts.api_keys WHERE account_id = $1 AND revoked_at IS NULL', [accountId]))[0]!.n;

    test('when an account holds 20 active keys, then a 21st is a 409 conflict that says the limit and how to free a slot, and nothing is stored', async () => {
      const accountId = await newAccount();
      for (let i = 0; i < 20; i++) await service.issue(accountId, { name: `key ${i}` });
      await expectApiError(
        service.issue(accountId, { name: 'one too many', environment: 'staging' }),
        'conflict',
        'This account already has 20 active keys, the most it may hold; revoke one to create another.',
      );
      expect(await activeRows(accountId)).toBe(20);
      // Another account is not held back by this one.
      await expect(service.issue(await newAccount(), { name: 'elsewhere' })).resolves.toMatchObject({ name: 'elsewhere' });
    });

    test('when the cap is lowered below what an account holds, then a roll with no overlap still replaces a key, and one with an overlap is refused', async () => {
      const accountId = await newAccount();
      const keys = [];
      for (let i = 0; i < 3; i++) keys.push(await service.issue(accountId, { name: `key ${i}` }));
      const lowered = capped(2);
      await expect(lowered.roll(accountId, keys[0]!.id, 'none')).resolves.toMatchObject({ name: 'key 0' });
      await expectApiError(lowered.roll(accountId, keys[1]!.id, '1h'), 'conflict', 'This account already has 2 active keys, the most it may hold; roll with no overlap, or revoke a key first.');
      expect(await activeRows(accountId)).toBe(4);
      expect((await lowered.list(accountId)).filter((k) => k.status === 'active')).toHaveLength(3);
    });

    test('when one key is revoked or has expired, then it frees its slot', async () => {
      const limited = capped(2);
      const accountId = await newAccount();
      const first = await limited.issue(accountId, { name: 'first', expiresInDays: 1 });
      const second = await limited.issue(accountId, { name: 'second' });
      await expectApiError(limited.issue(accountId, { name: 'third' }), 'conflict', 'This account already has 2 active keys, the most it may hold; revoke one to create another.');
      await limited.revoke(accountId, second.id);
      const third = await limited.issue(accountId, { name: 'third' });
      await expectApiError(limited.issue(accountId, { name: 'fourth' }), 'conflict');
      clock = new Date(first.expiresAt!.getTime());
      const fourth = await limited.issue(accountId, { name: 'fourth' });
      expect(Object.fromEntries((await limited.list(accountId)).map((k) => [k.id, k.status]))).toEqual({
        [first.id]: 'expired',
        [second.id]: 'revoked',
        [third.id]: 'active',
        [fourth.id]: 'active',
      });
      await limited.close();
    });

    test('when 12 keys are issued for one account at once, then exactly the cap of 5 are created and 7 are refused', async () => {
      const limited = capped(5);
      const other = capped(5);
      const accountId = await newAccount();
      // Two services, as two gateway processes would be, sharing one database.
      const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => (i % 2 ? other : limited).issue(accountId, { name: `parallel ${i}` })));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
      const refusals = outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as ApiError).toBody()] : []));
      expect(refusals).toEqual(
        Array.from({ length: 7 }, () => ({ code: 'conflict', message: 'This account already has 5 active keys, the most it may hold; revoke one to create another.', status: 409 })),
      );
      expect(await activeRows(accountId)).toBe(5);
      await limited.close();
      await other.close();
    });

    test('when the cap is not a whole number of at least 1, then the service refuses to start', () => {
      for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => capped(bad)).toThrow('at least 1');
    });
  });

  describe('new keys per day', () => {
    const limited = (churn: KeyChurnLimiter, { maxActiveKeys, on = db }: { maxActiveKeys?: number; on?: Database } = {}) =>
      createApiKeyService({ db: on, audit: createAuditLog({ db: on }), hashSecret: HASH_SECRET, revocations: bus, now: () => clock, maxActiveKeysPerAccount: maxActiveKeys, churn });
    const keyRows = (accountId: number) => db.query('SELECT id, revoked_at, rolled_to, expires_at FROM accounts.api_keys WHERE account_id = $1 ORDER BY id', [accountId]);
    const spent = (n: number) => `This account has created or rolled ${n} keys in 24 hours, the most it may; try again in 24 hours.`;

    test('when an account has created and rolled its allowance of keys, then a create and a roll are 429 rate_limited, nothing is written, and another account is not held back', async () => {
      const keys = limited(createKeyChurnLimiter({ maxPerDay: 3 }));
      const accountId = await newAccount();
      const first = await keys.issue(accountId, { name: 'first' });
      await keys.revoke(accountId, first.id);
      const second = await keys.issue(accountId, { name: 'second' });
      const rolled = await keys.roll(accountId, second.id, 'none');
      const before = await keyRows(accountId);

      await expectApiError(keys.issue(accountId, { name: 'third' }), 'rate_limited', spent(3));
      await expectApiError(keys.roll(accountId, rolled.id, '1h'), 'rate_limited', spent(3));
      expect(await keyRows(accountId)).toEqual(before);
      await expect(keys.issue(await newAccount(), { name: 'elsewhere' })).resolves.toMatchObject({ name: 'elsewhere' });
      await keys.close();
    });

    test('when a create or roll is refused for another reason (bad input, the cap, a revoked or unknown key), then it costs nothing of the allowance', async () => {
      const keys = limited(createKeyChurnLimiter({ maxPerDay: 2 }), { maxActiveKeys: 1 });
      const accountId = await newAccount();
      await expectApiError(keys.issue(accountId, { name: '' }), 'invalid_request');
      await expectApiError(keys.issue(accountId, { name: 'never', expiresInDays: 0 }), 'invalid_request');
      await expectApiError(keys.roll(accountId, 'key_0000000000000000', 'none'), 'not_found');
      const first = await keys.issue(accountId, { name: 'first' });
      await expectApiError(keys.issue(accountId, { name: 'over the cap' }), 'conflict');
      await expectApiError(keys.roll(accountId, first.id, '1h'), 'conflict');
      await expectApiError(keys.roll(accountId, first.id, 'soon' as never), 'invalid_request');
      await keys.revoke(accountId, first.id);
      await expectApiError(keys.roll(accountId, first.id, 'none'), 'conflict');
      const second = await keys.issue(accountId, { name: 'second' });
      await keys.revoke(accountId, second.id);
      await expectApiError(keys.issue(accountId, { name: 'third' }), 'rate_limited', spent(2));
      await keys.close();
    });

    test('when a create or roll fails after its key was counted, then the point is given back', async () => {
      const churn = createKeyChurnLimiter({ maxPerDay: 2 });
      // Two services sharing one allowance, as two gateway processes share one in Redis.
      const broken = limited(churn, { on: failingKeyInserts(db) });
      const working = limited(churn);
      const accountId = await newAccount();
      await expect(broken.issue(accountId, { name: 'lost' })).rejects.toThrow('No space left on device');
      const kept = await working.issue(accountId, { name: 'kept' });
      await expect(broken.roll(accountId, kept.id, 'none')).rejects.toThrow('No space left on device');
      await working.issue(accountId, { name: 'second' });
      await expectApiError(working.issue(accountId, { name: 'one too many' }), 'rate_limited', spent(2));
      expect((await working.list(accountId)).map((k) => `${k.name} ${k.status}`).sort()).toEqual(['kept active', 'second active']);
      await broken.close();
      await working.close();
    });
  });

  test('when the account was erased while its session was still in hand, then issuing or rolling a key is 401 as for an ended session, and nothing is written', async () => {
    const accountId = await newAccount();
    const held = await service.issue(accountId, { name: 'held' });
    // What an erase does to the account's rows: the cascade takes its keys and sessions with it.
    await db.query('DELETE FROM accounts.accounts WHERE id = $1', [accountId]);
    for (const attempt of [() => service.issue(accountId, { name: 'after' }), () => service.roll(accountId, held.id, 'none')]) {
      const err = await attempt().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).toBody()).toEqual({ code: 'unauthorized', message: 'You are not signed in, or your session has ended.', status: 401 });
    }
    expect(await db.query('SELECT id FROM accounts.api_keys WHERE account_id = $1', [accountId])).toEqual([]);
    const audited = await db.query<{ action: string; target_id: string }>('SELECT action, target_id FROM accounts.audit_log WHERE account_id = $1 ORDER BY id', [accountId]);
    expect(audited).toEqual([{ action: 'key.created', target_id: held.id }]);
  });

  test('when a key is verified, then the result names the key, account and environment', async () => {
    const accountId = await newAccount();
    const issued = await service.issue(accountId, { name: 'verify me', expiresInDays: 10 });
    await expect(service.verify(issued.key, 'production')).resolves.toEqual({
      valid: true,
      keyId: issued.id,
      accountId,
      environment: 'production',
      expiresAt: issued.expiresAt,
      plan: 'default',
    });
    await expect(service.verify(issued.key, 'staging')).resolves.toEqual({ valid: false, code: 'WRONG_ENVIRONMENT' });
    clock = new Date(issued.expiresAt!.getTime());
    await expect(service.verify(issued.key, 'production')).resolves.toEqual({ valid: false, code: 'EXPIRED' });
  });

  test('when a malformed key is verified, then it is MALFORMED without touching the database', async () => {
    const before = db.statements.length;
    for (const secret of ['', 'Bearer x', 'asg_prod_short', `asg_live_${'a'.repeat(43)}`, `asg_prod_${'a'.repeat(42)}!`, `asg_prod_${'a'.repeat(44)}`]) {
      await expect(service.verify(secret, 'production')).resolves.toEqual({ valid: false, code: 'MALFORMED' });
    }
    expect(db.statements.length).toBe(before);
  });

  test('when a well-formed but unknown key is verified, then it is NOT_FOUND', async () => {
    await expect(service.verify(`asg_prod_${'A'.repeat(43)}`, 'production')).resolves.toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  test('when a key is revoked, then verify says REVOKED, the list says revoked, and its hash is published', async () => {
    const published: string[] = [];
    bus.subscribe((keyHash) => published.push(keyHash));
    const accountId = await newAccount();
    const issued = await service.issue(accountId, { name: 'to revoke' });
    await service.revoke(accountId, issued.id);
    await expect(service.verify(issued.key, 'production')).resolves.toEqual({ valid: false, code: 'REVOKED' });
    expect(published).toEqual([service.hash(issued.key)]);
    expect((await service.list(accountId))[0]).toMatchObject({ status: 'revoked', revokedAt: clock });
  });

  test('when a revoked key is revoked again, then it succeeds and keeps the first revocation time', async () => {
    const accountId = await newAccount();
    const issued = await service.issue(accountId, { name: 'twice' });
    await service.revoke(accountId, issued.id);
    const firstRevocation = clock;
    clock = new Date(clock.getTime() + 60_000);
    await expect(service.revoke(accountId, issued.id)).resolves.toBeUndefined();
    expect((await service.list(accountId))[0]!.revokedAt).toEqual(firstRevocation);
  });

  test("when another account's, an unknown or a malformed key id is revoked, then it is not_found and nothing changes", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    const issued = await service.issue(owner, { name: 'mine' });
    const message = 'No API key with this id exists in your account.';
    await expectApiError(service.revoke(other, issued.id), 'not_found', message);
    await expectApiError(service.revoke(owner, 'key_AAAAAAAAAAAAAAAA'), 'not_found', message);
    await expectApiError(service.revoke(owner, "key_' OR 1=1 --"), 'not_found', message);
    await expect(service.verify(issued.key, 'production')).resolves.toMatchObject({ valid: true });
  });

  test('when a key is used many times, then nothing is written until the flush, which is one UPDATE', async () => {
    const accountId = await newAccount();
    const a = await service.issue(accountId, { name: 'a' });
    const b = await service.issue(accountId, { name: 'b' });
    const before = db.statements.length;
    const start = clock.getTime();
    for (let i = 0; i < 100; i++) {
      clock = new Date(clock.getTime() + 10);
      service.recordUse(i % 2 === 0 ? a.id : b.id, false);
    }
    expect(db.statements.length).toBe(before);
    // The clock is read at a key's first use in the interval only (reading it allocates).
    const firstA = new Date(start + 10);
    const firstB = new Date(start + 20);
    await service.flushUsage();
    expect(db.statements.slice(before)).toEqual([expect.stringContaining('UPDATE')]);
    const rows = await db.query<{ id: string; last_used_at: Date }>('SELECT id, last_used_at FROM accounts.api_keys WHERE account_id = $1', [accountId]);
    expect(Object.fromEntries(rows.map((r) => [r.id, new Date(r.last_used_at).toISOString()]))).toEqual({
      [a.id]: firstA.toISOString(),
      [b.id]: firstB.toISOString(),
    });
    await service.flushUsage();
    expect(db.statements.length).toBe(before + 2); // the SELECT above; an empty flush writes nothing
    expect((await service.list(accountId)).map((k) => k.usage.requests)).toEqual([50, 50]);
  });

  test('when a key is used across flush intervals, then its times are those of its first use in the latest interval', async () => {
    const accountId = await newAccount();
    const issued = await service.issue(accountId, { name: 'intervals' });
    service.recordUse(issued.id, true);
    const firstInterval = clock;
    clock = new Date(clock.getTime() + 1000);
    service.recordUse(issued.id, true);
    await service.flushUsage();
    expect(await usageRow(issued.id)).toEqual({ requests: 2, deprecated_calls: 2, last_used_at: firstInterval, last_deprecated_call_at: firstInterval });
    clock = new Date(clock.getTime() + 4000);
    const secondInterval = clock;
    service.recordUse(issued.id, false);
    clock = new Date(clock.getTime() + 1000);
    const firstDeprecatedInSecond = clock;
    service.recordUse(issued.id, true);
    clock = new Date(clock.getTime() + 1000);
    service.recordUse(issued.id, true);
    await service.flushUsage();
    expect(await usageRow(issued.id)).toEqual({ requests: 5, deprecated_calls: 4, last_used_at: secondInterval, last_deprecated_call_at: firstDeprecatedInSecond });
  });

  test('when a use is recorded but not yet flushed, then the list already shows it', async () => {
    const accountId = await newAccount();
    const issued = await service.issue(accountId, { name: 'pending' });
    service.recordUse(issued.id, false);
    expect((await service.list(accountId))[0]!.lastUsedAt).toEqual(clock);
  });

  test('when the flush interval passes, then pending uses are written without being asked', async () => {
    const timed = createApiKeyService({ db, audit: createAuditLog({ db }), hashSecret: HASH_SECRET, revocations: bus, now: () => clock, flushIntervalMs: 20 });
    const accountId = await newAccount();
    const issued = await timed.issue(accountId, { name: 'timed' });
    timed.recordUse(issued.id, false);
    const deadline = Date.now() + 2000;
    let stored: unknown = null;
    while (stored === null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      [{ last_used_at: stored }] = (await db.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM accounts.api_keys WHERE id = $1', [issued.id])) as [
        { last_used_at: Date | null },
      ];
    }
    expect(stored).toEqual(clock);
    await timed.close();
  });

  test('when the service closes, then pending uses and counts are written', async () => {
    const closing = createApiKeyService({ db, audit: createAuditLog({ db }), hashSecret: HASH_SECRET, revocations: bus, now: () => clock });
    const accountId = await newAccount();
    const issued = await closing.issue(accountId, { name: 'closing' });
    closing.recordUse(issued.id, true);
    closing.recordUse(issued.id, false);
    closing.recordUse(issued.id, true);
    await closing.close();
    expect(await usageRow(issued.id)).toEqual({ requests: 3, deprecated_calls: 2, last_used_at: clock, last_deprecated_call_at: clock });
  });

  test('when uses are recorded, then the list adds the pending counts to the stored ones', async () => {
    const accountId = await newAccount();
    const issued = await service.issue(accountId, { name: 'counted' });
    service.recordUse(issued.id, false);
    service.recordUse(issued.id, true);
    const firstDeprecated = clock;
    await service.flushUsage();
    clock = new Date(clock.getTime() + 60_000);
    service.recordUse(issued.id, false);
    expect((await service.list(accountId))[0]).toMatchObject({
      lastUsedAt: clock,
      usage: { requests: 3, deprecatedCalls: 1, lastDeprecatedCallAt: firstDeprecated },
    });
    clock = new Date(clock.getTime() + 60_000);
    service.recordUse(issued.id, true);
    expect((await service.list(accountId))[0]!.usage).toEqual({ requests: 4, deprecatedCalls: 2, lastDeprecatedCallAt: clock });
    expect(await usageRow(issued.id)).toMatchObject({ requests: 2, deprecated_calls: 1 });
  });

  test('when two service instances share the database, then their flushed counts add up and the latest times win', async () => {
    const other = createApiKeyService({ db, audit: createAuditLog({ db }), hashSecret: HASH_SECRET, revocations: bus, now: () => clock, flushIntervalMs: 60_000 });
    const accountId = await newAccount();
    const issued = await service.issue(accountId, { name: 'shared' });
    service.recordUse(issued.id, true);
    const firstGatewayDeprecated = clock;
    clock = new Date(clock.getTime() + 1000);
    other.recordUse(issued.id, false);
    other.recordUse(issued.id, false);
    const latestUse = clock;
    service.recordUse(issued.id, false);
    // Both write at once, as two gateway processes would.
    await Promise.all([service.flushUsage(), other.flushUsage()]);
    expect(await usageRow(issued.id)).toEqual({ requests: 4, deprecated_calls: 1, last_used_at: latestUse, last_deprecated_call_at: firstGatewayDeprecated });

    // An older time from a slower process never moves the stored times back.
    other.recordUse(issued.id, true);
    clock = new Date(clock.getTime() - 60_000);
    service.recordUse(issued.id, true);
    await Promise.all([other.flushUsage(), service.flushUsage()]);
    expect(await usageRow(issued.id)).toEqual({ requests: 6, deprecated_calls: 3, last_used_at: latestUse, last_deprecated_call_at: latestUse });
    await other.close();
  });

  test('when a flush fails, then its counts are kept, merged with later uses, shown by the list and written by the next flush', async () => {
    const flaky = flakyDatabase(db);
    const usage = createApiKeyService({ db: flaky, audit: createAuditLog({ db: flaky }), hashSecret: HASH_SECRET, revocations: bus, now: () => clock, flushIntervalMs: 60_000 });
    const accountId = await newAccount();
    const issued = await usage.issue(accountId, { name: 'outage' });
    usage.recordUse(issued.id, true);
    usage.recordUse(issued.id, false);
    flaky.down = true;
    await expect(usage.flushUsage()).rejects.toThrow('connection terminated unexpectedly');
    clock = new Date(clock.getTime() + 1000);
    usage.recordUse(issued.id, true);
    expect((await usage.list(accountId))[0]!.usage).toEqual({ requests: 3, deprecatedCalls: 2, lastDeprecatedCallAt: clock });
    await expect(usage.close()).rejects.toThrow('connection terminated unexpectedly');
    expect(await usageRow(issued.id)).toEqual({ requests: 0, deprecated_calls: 0, last_used_at: null, last_deprecated_call_at: null });

    flaky.down = false;
    await usage.flushUsage();
    expect(flaky.refused).toBe(2);
    expect(await usageRow(issued.id)).toEqual({ requests: 3, deprecated_calls: 2, last_used_at: clock, last_deprecated_call_at: clock });
    await usage.flushUsage();
    expect((await usageRow(issued.id))!.requests).toBe(3);
  });

  test('when a background flush fails, then it is reported and retried on the next interval without being asked', async () => {
    const flaky = flakyDatabase(db);
    const errors: unknown[] = [];
    const timed = createApiKeyService({
      db: flaky, audit: createAuditLog({ db: flaky }),
      hashSecret: HASH_SECRET,
      revocations: bus,
      now: () => clock,
      flushIntervalMs: 20,
      onFlushError: (err) => {
        errors.push(err);
        flaky.down = false;
      },
    });
    const accountId = await newAccount();
    const issued = await timed.issue(accountId, { name: 'retried' });
    flaky.down = true;
    timed.recordUse(issued.id, true);
    timed.recordUse(issued.id, true);
    const deadline = Date.now() + 5000;
    while ((await usageRow(issued.id))!.requests === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(errors).toEqual([new Error('connection terminated unexpectedly')]);
    expect(await usageRow(issued.id)).toMatchObject({ requests: 2, deprecated_calls: 2 });
    await timed.close();
  });

  test('when a database migrated before usage counts existed is migrated again, then its keys start at zero', async () => {
    const older = await createTestDatabase(kind);
    const olderDb = await older.open();
    try {
      await migrate(olderDb, KEYS_SCHEMA, keysMigrations.slice(0, 1));
      const [account] = await olderDb.query<{ id: number }>(`INSERT INTO accounts.accounts (email, password_hash) VALUES ('old@example.com', 'x') RETURNING id`);
      await olderDb.query(
        `INSERT INTO accounts.api_keys (id, account_id, name, environment, prefix, hash, last_used_at) VALUES ('key_AAAAAAAAAAAAAAAA', $1, 'old', 'production', 'asg_prod_AAAAAA', $2, $3)`,
        [account!.id, 'a'.repeat(64), clock],
      );
      await migrateKeys(olderDb);
      const upgraded = createApiKeyService({ db: olderDb, audit: createAuditLog({ db: olderDb }), hashSecret: HASH_SECRET, revocations: bus, now: () => clock });
      expect((await upgraded.list(account!.id))[0]).toMatchObject({ lastUsedAt: clock, usage: { requests: 0, deprecatedCalls: 0, lastDeprecatedCallAt: null } });
      upgraded.recordUse('key_AAAAAAAAAAAAAAAA', true);
      await upgraded.close();
      expect((await olderDb.query<{ requests: number }>('SELECT requests FROM accounts.api_keys'))[0]!.requests).toBe(1);
    } finally {
      await olderDb.close();
      await older.destroy();
    }
  });

  test('when the hash secret is short, then the service refuses to start', () => {
    expect(() => createApiKeyService({ db, audit: createAuditLog({ db }), hashSecret: 'short', revocations: bus })).toThrow('at least 32 characters');
  });
});
