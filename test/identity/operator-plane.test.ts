import type { Database } from '../../db/database';
import { createAccountAdmin, type AccountAdmin } from '../../identity/account-admin';
import { createApiKeyService, type ApiKeyService } from '../../identity/api-key-service';
import { createAuditLog, type AuditLog } from '../../identity/audit-log';
import { recordKeyExpiries } from '../../identity/key-expiry-audit';
import { createKeyVerifier, type KeyVerifier } from '../../identity/key-verifier';
import { migrateKeys } from '../../identity/migrations';
import { createPlanService, type PlanService } from '../../identity/plans';
import { createLocalRevocationBus, type RevocationBus } from '../../identity/revocation-bus';
import { createTestDatabase, insertAccount, testDatabaseKinds, type TestDatabase } from '../support/databases';
import { until } from '../support/until';

const HASH_SECRET = 'operator-test-hash-secret-0123456789abcdef';
const ADMIN = { actor: 'admin:ops', requestId: 'req-1' } as const;

/** The identity services behind the admin API, on each database: plans, suspension, the audit trail. */
describe.each(testDatabaseKinds())('operator plane services on %s', (kind) => {
  let testDb: TestDatabase;
  let db: Database;
  let clock: Date;
  let bus: RevocationBus;
  let audit: AuditLog;
  let plans: PlanService;
  let keys: ApiKeyService;
  let verifier: KeyVerifier;
  let accounts: AccountAdmin;

  const newPlans = (defaultRequestsPerMinute: number, on = bus) => createPlanService({ db, bus: on, audit, defaultRequestsPerMinute, now: () => clock });
  const auditOf = async (accountId: number) => (await audit.list({ limit: 100, accountId })).entries.map((e) => [e.actor, e.action, e.targetId]);

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    db = await testDb.open();
    await migrateKeys(db);
  });

  beforeEach(async () => {
    clock = new Date('2026-11-25T12:00:00.000Z');
    bus = createLocalRevocationBus();
    audit = createAuditLog({ db, now: () => clock });
    plans = await newPlans(600);
    keys = createApiKeyService({ db, audit, hashSecret: HASH_SECRET, revocations: bus, now: () => clock, flushIntervalMs: 60_000 });
    verifier = createKeyVerifier({ keys, revocations: bus, ttlMs: 60_000, max: 100, now: () => clock });
    accounts = createAccountAdmin({ db, audit, plans, bus, now: () => clock });
  });

  afterEach(async () => {
    verifier.close();
    plans.close();
    await keys.close();
  });

  afterAll(async () => {
    await db.close();
    await testDb.destroy();
  });

  test('when RATE_LIMIT_PER_MINUTE changes between starts, then the default plan follows it until an admin sets the plan', async () => {
    expect(plans.get('default')).toMatchObject({ name: 'default', requestsPerMinute: 600, requestsPerMonth: null });
    const restarted = await newPlans(120);
    expect(restarted.get('default').requestsPerMinute).toBe(120);
    await restarted.put('default', { requestsPerMinute: 300, requestsPerMonth: 50_000 }, ADMIN);
    const again = await newPlans(900);
    expect(again.get('default')).toMatchObject({ requestsPerMinute: 300, requestsPerMonth: 50_000 });
    restarted.close();
    again.close();
    // Back to a config-shaped default for the tests after this one.
    await db.query(`UPDATE accounts.plans SET set_by = 'config', requests_per_minute = 600, requests_per_month = NULL WHERE name = 'default'`);
  });

  test('when a plan is created or changed, then every process sharing the bus reloads it and the audit says what changed', async () => {
    const other = await newPlans(600);
    const name = `pro-${kind}`;
    await expect(plans.put(name, { requestsPerMinute: 1200, requestsPerMonth: 100_000 }, ADMIN)).resolves.toMatchObject({ created: true });
    await expect(plans.put(name, { requestsPerMinute: 2400, requestsPerMonth: null }, ADMIN)).resolves.toMatchObject({ created: false });
    await until('the other service to reload the plan on the bus message', () => other.get(name).requestsPerMinute === 2400);
    expect(other.get(name)).toMatchObject({ requestsPerMinute: 2400, requestsPerMonth: null });
    const entries = (await audit.list({ limit: 10 })).entries.filter((e) => e.targetId === name);
    expect(entries.map((e) => [e.action, e.details])).toEqual([
      ['plan.updated', { requestsPerMinute: 2400, requestsPerMonth: null, was: { requestsPerMinute: 1200, requestsPerMonth: 100_000 } }],
      ['plan.created', { requestsPerMinute: 1200, requestsPerMonth: 100_000 }],
    ]);
    expect(entries[0]).toMatchObject({ actor: 'admin:ops', requestId: 'req-1', targetType: 'plan', accountId: null });
    other.close();
  });

  test('when an account is suspended, then its cached keys are refused at once, its sessions end, and reinstating restores the active keys only', async () => {
    const accountId = await insertAccount(db);
    const bystander = await insertAccount(db);
    const live = await keys.issue(accountId, { name: 'live' });
    const revoked = await keys.issue(accountId, { name: 'revoked' });
    const theirs = await keys.issue(bystander, { name: 'theirs' });
    await keys.revoke(accountId, revoked.id);
    await db.query(`INSERT INTO accounts.sessions (id, account_id, expires_at) VALUES ($1, $2, $3)`, [`s-${accountId}`, accountId, new Date(clock.getTime() + 3_600_000)]);
    await expect(verifier.verify(live.key, 'production')).resolves.toMatchObject({ valid: true, plan: 'default' });
    await expect(verifier.verify(theirs.key, 'production')).resolves.toMatchObject({ valid: true });

    const suspended = await accounts.suspend(accountId, 'card fraud', ADMIN);
    expect(suspended).toMatchObject({ id: accountId, status: 'suspended', suspensionReason: 'card fraud', suspendedAt: clock, keyCount: 2 });
    await expect(verifier.verify(live.key, 'production')).resolves.toEqual({ valid: false, code: 'SUSPENDED' });
    expect(verifier.stats().misses).toBe(3); // the bystander's key stayed cached
    await expect(verifier.verify(theirs.key, 'production')).resolves.toMatchObject({ valid: true });
    const [session] = await db.query<{ revoked_at: Date | null }>(`SELECT revoked_at FROM accounts.sessions WHERE id = $1`, [`s-${accountId}`]);
    expect(session!.revoked_at).not.toBeNull();
    await expect(keys.issue(accountId, { name: 'more' })).rejects.toMatchObject({ code: 'forbidden', message: 'This account is suspended; it cannot create keys.' });
    await expect(accounts.suspend(accountId, 'again', ADMIN)).rejects.toMatchObject({ code: 'conflict', message: `Account ${accountId} is already suspended.` });

    await expect(accounts.reinstate(accountId, null, ADMIN)).resolves.toMatchObject({ status: 'active', suspendedAt: null, suspensionReason: null });
    await expect(verifier.verify(live.key, 'production')).resolves.toMatchObject({ valid: true });
    await expect(verifier.verify(revoked.key, 'production')).resolves.toEqual({ valid: false, code: 'REVOKED' });
    await expect(accounts.reinstate(accountId, null, ADMIN)).rejects.toMatchObject({ code: 'conflict' });
    expect(await auditOf(accountId)).toEqual([
      ['admin:ops', 'account.reinstated', String(accountId)],
      ['admin:ops', 'account.suspended', String(accountId)],
      [`account:${accountId}`, 'key.revoked', revoked.id],
      [`account:${accountId}`, 'key.created', revoked.id],
      [`account:${accountId}`, 'key.created', live.id],
    ]);
  });

  test('when an account moves to another plan, then its keys are verified again and carry the new plan', async () => {
    await plans.put(`team-${kind}`, { requestsPerMinute: 60, requestsPerMonth: 1000 }, ADMIN);
    const accountId = await insertAccount(db);
    const key = await keys.issue(accountId, { name: 'planned' });
    await expect(verifier.verify(key.key, 'production')).resolves.toMatchObject({ plan: 'default' });
    await expect(accounts.setPlan(accountId, `team-${kind}`, ADMIN)).resolves.toMatchObject({ plan: `team-${kind}` });
    await expect(verifier.verify(key.key, 'production')).resolves.toMatchObject({ plan: `team-${kind}` });
    await expect(accounts.setPlan(accountId, 'no-such-plan', ADMIN)).rejects.toMatchObject({ code: 'invalid_request', message: 'There is no plan named "no-such-plan".' });
    const [entry] = (await audit.list({ limit: 1, accountId })).entries;
    expect(entry).toMatchObject({ action: 'account.plan_changed', details: { from: 'default', to: `team-${kind}` } });
  });

  test('when an account is erased, then no row of it remains but its audit entries, which keep only its id', async () => {
    const accountId = await insertAccount(db);
    const key = await keys.issue(accountId, { name: 'secret project name' });
    await db.query(`INSERT INTO accounts.account_usage_months (account_id, month, requests) VALUES ($1, '2026-11-01', 7)`, [accountId]);
    await expect(verifier.verify(key.key, 'production')).resolves.toMatchObject({ valid: true });
    await accounts.erase(accountId, 'GDPR request', ADMIN);
    await expect(verifier.verify(key.key, 'production')).resolves.toEqual({ valid: false, code: 'NOT_FOUND' });
    for (const table of ['accounts', 'api_keys', 'sessions', 'account_usage_months']) {
      const column = table === 'accounts' ? 'id' : 'account_id';
      expect(await db.query(`SELECT 1 FROM accounts.${table} WHERE ${column} = $1`, [accountId])).toEqual([]);
    }
    const entries = (await audit.list({ limit: 10, accountId })).entries;
    expect(entries.map((e) => [e.action, e.details])).toEqual([
      ['account.deleted', { keys: 1 }],
      ['key.created', null],
    ]);
    expect(JSON.stringify(entries)).not.toContain('secret project name');
    await expect(accounts.erase(accountId, null, ADMIN)).rejects.toMatchObject({ code: 'not_found' });
  });

  test('when keys expire, then each expiry is audited once at its own time, and revoked keys are not', async () => {
    const accountId = await insertAccount(db);
    const expiring = await keys.issue(accountId, { name: 'short', expiresInDays: 1 });
    const revoked = await keys.issue(accountId, { name: 'revoked first', expiresInDays: 1 });
    await keys.issue(accountId, { name: 'forever' });
    await keys.revoke(accountId, revoked.id);
    const before = await recordKeyExpiries(db, clock);
    clock = new Date(clock.getTime() + 2 * 86_400_000);
    expect(before).toBe(0);
    expect(await recordKeyExpiries(db, clock)).toBe(1);
    expect(await recordKeyExpiries(db, clock)).toBe(0);
    const expiries = (await audit.list({ limit: 10, accountId })).entries.filter((e) => e.action === 'key.expired');
    expect(expiries).toEqual([expect.objectContaining({ actor: 'system', targetId: expiring.id, at: expiring.expiresAt })]);
  });

  test('when the audit is read in pages, then it runs newest first and each page leads to the next', async () => {
    const accountId = await insertAccount(db);
    for (let i = 0; i < 5; i++) await keys.issue(accountId, { name: `k${i}` });
    const first = await audit.list({ limit: 2, accountId });
    const second = await audit.list({ limit: 2, accountId, after: first.next! });
    const third = await audit.list({ limit: 2, accountId, after: second.next! });
    const names = [...first.entries, ...second.entries, ...third.entries].map((e) => (e.details as { name: string }).name);
    expect(names).toEqual(['k4', 'k3', 'k2', 'k1', 'k0']);
    expect(third.next).toBeNull();
  });
});
