import type { Database } from '../db/database';
import { createAccountAdmin, type AccountAdmin } from '../identity/account-admin';
import { createAccountService } from '../identity/account-service';
import { createAccountUsageLedger } from '../identity/account-usage-ledger';
import { createApiKeyService, type ApiKeyService } from '../identity/api-key-service';
import { createAuditLog } from '../identity/audit-log';
import { migrateKeys } from '../identity/migrations';
import { createPasswordHasher, type PasswordHasher } from '../identity/password';
import { createPlanService, type PlanService } from '../identity/plans';
import { createPlanUsage } from '../identity/plan-usage';
import { createLocalRevocationBus } from '../identity/revocation-bus';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from './support/databases';
import { jsonOf } from './support/http';
import { startPortalApi, type PortalApiServer } from './support/portal-api-server';

const PASSWORD = 'correct horse battery staple';
const ADMIN = { actor: 'admin:ops', requestId: 'req-race' } as const;

/**
 * A sign-in whose password check is under way when an operator suspends or erases the account:
 * it must answer as a sign-in after the change does, and leave no session behind. The operator
 * acts the moment the real (cheapened) password hasher has said yes, before the session starts.
 */
describe.each(testDatabaseKinds())('signing in while the account is suspended or erased, on %s', (kind) => {
  let testDb: TestDatabase;
  let db: Database;
  let plans: PlanService;
  let apiKeys: ApiKeyService;
  let admin: AccountAdmin;
  let server: PortalApiServer;
  let base: string;
  let afterPasswordCheck: (() => Promise<unknown>) | undefined;

  const postJson = (path: string, body: unknown) =>
    fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const liveSessions = (accountId: number) => db.query('SELECT id FROM accounts.sessions WHERE account_id = $1 AND revoked_at IS NULL', [accountId]);

  async function signUp(email: string): Promise<number> {
    const res = await postJson('/signup', { email, password: PASSWORD });
    expect(res.status).toBe(201);
    return (await jsonOf(res)).id;
  }

  async function expectError(res: Response, status: number, code: string, message: string): Promise<void> {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await jsonOf(res)).toEqual({ code, message, status });
    expect(res.headers.getSetCookie()).toEqual([]);
  }

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    db = await testDb.open();
    await migrateKeys(db);
    const bus = createLocalRevocationBus();
    const audit = createAuditLog({ db });
    plans = await createPlanService({ db, bus, audit, defaultRequestsPerMinute: 600, now: () => new Date() });
    admin = createAccountAdmin({ db, audit, plans, bus, now: () => new Date() });
    apiKeys = createApiKeyService({ db, audit, hashSecret: 'races-test-hash-secret-0123456789abcdef', revocations: bus });
    const hasher = createPasswordHasher({ cost: { N: 2 ** 12, r: 8, p: 1 } });
    const passwords: PasswordHasher = {
      ...hasher,
      async verify(password, encoded) {
        const matches = await hasher.verify(password, encoded);
        await afterPasswordCheck?.();
        return matches;
      },
    };
    const usage = createAccountUsageLedger({ db, clock: Date.now, flushIntervalMs: 60_000, onFlushError: () => {} });
    server = await startPortalApi(db, {
      accounts: createAccountService({ db, passwords }),
      apiKeys,
      planUsage: createPlanUsage({ db, plans, usage, now: () => new Date() }),
    });
    base = server.base;
  });

  afterEach(() => {
    afterPasswordCheck = undefined;
  });

  afterAll(async () => {
    await server?.stop();
    plans?.close();
    await apiKeys?.close();
    await db?.close();
    await testDb?.destroy();
  });

  test('when the account is suspended during the password check, then the sign-in is 403 as after a suspension, and no session starts', async () => {
    const email = `suspended-${kind}@example.com`;
    const accountId = await signUp(email);
    afterPasswordCheck = () => admin.suspend(accountId, 'card fraud', ADMIN);
    await expectError(await postJson('/login', { email, password: PASSWORD }), 403, 'forbidden', 'This account is suspended; contact support.');
    expect(await liveSessions(accountId)).toEqual([]);
    afterPasswordCheck = undefined;
    await expectError(await postJson('/login', { email, password: PASSWORD }), 403, 'forbidden', 'This account is suspended; contact support.');
  });

  test('when the account is erased during the password check, then the sign-in is 401 as for an unknown email, not a 500, and no session starts', async () => {
    const email = `erased-${kind}@example.com`;
    const accountId = await signUp(email);
    afterPasswordCheck = () => admin.erase(accountId, null, ADMIN);
    await expectError(await postJson('/login', { email, password: PASSWORD }), 401, 'unauthorized', 'Email or password is incorrect.');
    expect(await db.query('SELECT id FROM accounts.sessions WHERE account_id = $1', [accountId])).toEqual([]);
    afterPasswordCheck = undefined;
    await expectError(await postJson('/login', { email, password: PASSWORD }), 401, 'unauthorized', 'Email or password is incorrect.');
  });
});
