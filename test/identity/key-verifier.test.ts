import { createAuditLog } from '../../identity/audit-log';
import type { Database } from '../../db/database';
import { createTestDatabase, insertAccount, testDatabaseKinds, type TestDatabase } from '../support/databases';
import { createApiKeyService, type ApiKeyService } from '../../identity/api-key-service';
import { createKeyVerifier, type KeyVerifier } from '../../identity/key-verifier';
import { migrateKeys } from '../../identity/migrations';
import { createLocalRevocationBus, type RevocationBus } from '../../identity/revocation-bus';

const HASH_SECRET = 'verifier-test-hash-secret-0123456789abcdef';

describe.each(testDatabaseKinds())('key verifier on %s', (kind) => {
  let testDb: TestDatabase;
  let db: Database;
  let storeReads: number;
  let clock: Date;
  let bus: RevocationBus;
  let keys: ApiKeyService;
  let verifier: KeyVerifier;
  let accountId: number;

  const advance = (ms: number) => {
    clock = new Date(clock.getTime() + ms);
  };
  const newVerifier = (options: { ttlMs?: number; max?: number; negativeMax?: number } = {}) =>
    createKeyVerifier({ keys: countedKeys(), revocations: bus, ttlMs: options.ttlMs ?? 60_000, max: options.max ?? 1000, negativeMax: options.negativeMax, now: () => clock });
  /** The real service; store reads are counted so tests can see when the cache answered. */
  const countedKeys = () => ({
    hash: keys.hash,
    findByHash: (keyHash: string) => {
      storeReads++;
      return keys.findByHash(keyHash);
    },
  });

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    db = await testDb.open();
    await migrateKeys(db);
    accountId = await insertAccount(db);
  });

  beforeEach(() => {
    storeReads = 0;
    clock = new Date('2026-03-01T12:00:00.000Z');
    bus = createLocalRevocationBus();
    keys = createApiKeyService({ db, audit: createAuditLog({ db }), hashSecret: HASH_SECRET, revocations: bus, now: () => clock, flushIntervalMs: 60_000 });
    verifier = newVerifier();
  });

  afterEach(async () => {
    verifier.close();
    await keys.close();
  });

  afterAll(async () => {
    await db.close();
    await testDb.destroy();
  });

  test('when a valid key is verified again, then the cache answers without reading the store', async () => {
    const { key, id } = await keys.issue(accountId, { name: 'cached' });
    const expected = { valid: true, keyId: id, accountId, environment: 'production', expiresAt: null, plan: 'default' };
    await expect(verifier.verify(key, 'production')).resolves.toEqual(expected);
    await expect(verifier.verify(key, 'production')).resolves.toEqual(expected);
    await expect(verifier.verify(key, 'production')).resolves.toEqual(expected);
    expect(storeReads).toBe(1);
    expect(verifier.stats()).toMatchObject({ hits: 2, misses: 1, size: 1 });
  });

  test('when many requests carry the same uncached key at once, then the store is read once', async () => {
    const { key } = await keys.issue(accountId, { name: 'stampede' });
    const results = await Promise.all(Array.from({ length: 20 }, () => verifier.verify(key, 'production')));
    expect(results.every((r) => r.valid)).toBe(true);
    expect(storeReads).toBe(1);
  });

  test('when an unknown key is guessed repeatedly, then the store is read once per negative lifetime', async () => {
    const guess = `asg_prod_${'G'.repeat(43)}`;
    for (let i = 0; i < 10; i++) await expect(verifier.verify(guess, 'production')).resolves.toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(storeReads).toBe(1);
    advance(5001);
    await verifier.verify(guess, 'production');
    expect(storeReads).toBe(2);
  });

  test('when more unknown keys are guessed than the negative cache holds, then it stays bounded and real keys stay cached', async () => {
    verifier.close();
    verifier = newVerifier({ max: 10, negativeMax: 3 });
    const { key } = await keys.issue(accountId, { name: 'survivor' });
    await verifier.verify(key, 'production');
    for (let i = 0; i < 20; i++) await verifier.verify(`asg_prod_${String(i).padStart(43, 'x')}`, 'production');
    expect(verifier.stats().size).toBe(4);
    const reads = storeReads;
    await expect(verifier.verify(key, 'production')).resolves.toMatchObject({ valid: true });
    expect(storeReads).toBe(reads);
  });

  test('when a malformed key is verified, then neither the cache nor the store is involved', async () => {
    await expect(verifier.verify('not-a-key', 'production')).resolves.toEqual({ valid: false, code: 'MALFORMED' });
    expect(storeReads).toBe(0);
    expect(verifier.stats()).toMatchObject({ hits: 0, misses: 0, malformed: 1, size: 0 });
  });

  test('when a cached key is revoked, then it is refused within 1 s, in this and in every other subscribed verifier', async () => {
    const { key, id } = await keys.issue(accountId, { name: 'revoke me' });
    const otherProcess = newVerifier();
    await verifier.verify(key, 'production');
    await otherProcess.verify(key, 'production');
    const started = Date.now();
    await keys.revoke(accountId, id);
    await expect(verifier.verify(key, 'production')).resolves.toEqual({ valid: false, code: 'REVOKED' });
    await expect(otherProcess.verify(key, 'production')).resolves.toEqual({ valid: false, code: 'REVOKED' });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(verifier.stats().evictions).toBe(1);
    otherProcess.close();
  });

  test('when a revocation arrives while the key is being looked up, then that lookup is not cached', async () => {
    const { key } = await keys.issue(accountId, { name: 'racing' });
    const pending = verifier.verify(key, 'production');
    await bus.publish(keys.hash(key));
    await pending;
    await verifier.verify(key, 'production');
    expect(storeReads).toBe(2);
  });

  test('when a cached key reaches its expiry, then it is refused at once, without reading the store', async () => {
    verifier.close();
    verifier = newVerifier({ ttlMs: 48 * 60 * 60 * 1000 });
    const { key } = await keys.issue(accountId, { name: 'short-lived', expiresInDays: 1 });
    await expect(verifier.verify(key, 'production')).resolves.toMatchObject({ valid: true });
    advance(24 * 60 * 60 * 1000 - 1);
    await expect(verifier.verify(key, 'production')).resolves.toMatchObject({ valid: true });
    advance(1);
    await expect(verifier.verify(key, 'production')).resolves.toEqual({ valid: false, code: 'EXPIRED' });
    expect(storeReads).toBe(1);
  });

  test('when a cached key is used in the other environment, then it is WRONG_ENVIRONMENT', async () => {
    const { key } = await keys.issue(accountId, { name: 'staging only', environment: 'staging' });
    await expect(verifier.verify(key, 'staging')).resolves.toMatchObject({ valid: true, environment: 'staging' });
    await expect(verifier.verify(key, 'production')).resolves.toEqual({ valid: false, code: 'WRONG_ENVIRONMENT' });
    expect(storeReads).toBe(1);
  });

  test('when the cache lifetime passes, then the key is read from the store again', async () => {
    const { key } = await keys.issue(accountId, { name: 'ttl' });
    await verifier.verify(key, 'production');
    advance(60_001);
    await verifier.verify(key, 'production');
    expect(storeReads).toBe(2);
  });

  test('when a key is verified as valid, then no use is recorded (the gateway records it, knowing the operation)', async () => {
    const { key, id } = await keys.issue(accountId, { name: 'verified only' });
    await expect(verifier.verify(key, 'production')).resolves.toMatchObject({ valid: true, keyId: id });
    await keys.flushUsage();
    const listed = (await keys.list(accountId)).find((k) => k.id === id);
    expect(listed).toMatchObject({ lastUsedAt: null, usage: { requests: 0, deprecatedCalls: 0, lastDeprecatedCallAt: null } });
  });

  test('when options are out of range, then the verifier refuses to be built', () => {
    expect(() => createKeyVerifier({ keys, revocations: bus, ttlMs: 0, max: 10 })).toThrow('ttlMs must be a positive integer');
    expect(() => createKeyVerifier({ keys, revocations: bus, ttlMs: 10, max: 1.5 })).toThrow('max must be a positive integer');
  });
});
