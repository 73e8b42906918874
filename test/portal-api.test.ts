import { createAuditLog } from '../identity/audit-log';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Database } from '../db/database';
import { createAccountService } from '../identity/account-service';
import { createAccountUsageLedger, type AccountUsageLedger } from '../identity/account-usage-ledger';
import { createPlanUsage } from '../identity/plan-usage';
import { createPlanService, type PlanService } from '../identity/plans';
import { createApiKeyService, type ApiKeyService } from '../identity/api-key-service';
import { createDailyUsageService } from '../identity/daily-usage-service';
import { createKeyVerifier, type KeyVerifier } from '../identity/key-verifier';
import { createLoginLimiter } from '../identity/login-limiter';
import { createSignupLimiter } from '../identity/signup-limiter';
import { migrateKeys } from '../identity/migrations';
import { createLocalRevocationBus } from '../identity/revocation-bus';
import { createSessionService } from '../identity/session-service';
import { createPortalApiRouter } from '../portal/api/router';
import { clientKey } from '../gateway/http/client-ip';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from './support/databases';
import { jsonOf } from './support/http';

const SESSION_SECRET = 'portal-api-test-session-secret-0123456789';
const HASH_SECRET = 'portal-api-test-hash-secret-0123456789abc';
const PASSWORD = 'correct horse battery staple';
const TWELVE_HOURS_S = 12 * 60 * 60;

interface RunningPortal {
  url: string;
  close(): Promise<void>;
}

/** The portal API router on a real Express app on port 0, as the gateway mounts it. */
async function startPortal(deps: Parameters<typeof createPortalApiRouter>[0]): Promise<RunningPortal> {
  const app = express();
  app.use('/portal/api', createPortalApiRouter(deps));
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/portal/api`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The `name=value` part of the Set-Cookie header, ready to send back. */
function sessionCookieOf(res: Response): string {
  const [cookie] = res.headers.getSetCookie();
  expect(cookie).toBeDefined();
  return cookie!.split(';', 1)[0]!;
}

describe.each(testDatabaseKinds())('portal API on %s', (kind) => {
  let testDb: TestDatabase;
  let db: Database;
  let apiKeys: ApiKeyService;
  let verifier: KeyVerifier;
  let plans: PlanService;
  let accountUsage: AccountUsageLedger;
  let portal: RunningPortal;
  let securePortal: RunningPortal;
  let clock: Date;
  const now = () => clock;

  const post = (path: string, body: unknown, headers: Record<string, string> = {}, base = portal.url) =>
    fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const get = (path: string, cookie?: string) => fetch(portal.url + path, { headers: cookie ? { cookie } : {} });
  const del = (path: string, cookie: string) => fetch(portal.url + path, { method: 'DELETE', headers: { cookie } });
  const signUp = async (email: string) => {
    const res = await post('/signup', { email, password: PASSWORD });
    expect(res.status).toBe(201);
    return { account: await jsonOf(res), cookie: sessionCookieOf(res) };
  };

  beforeAll(async () => {
    clock = new Date('2026-06-01T10:00:00.000Z');
    testDb = await createTestDatabase(kind);
    db = await testDb.open();
    await migrateKeys(db);
    const revocations = createLocalRevocationBus();
    apiKeys = createApiKeyService({ db, audit: createAuditLog({ db }), hashSecret: HASH_SECRET, revocations, now });
    verifier = createKeyVerifier({ keys: apiKeys, revocations, ttlMs: 60_000, max: 1000, now });
    plans = await createPlanService({ db, bus: revocations, audit: createAuditLog({ db }), defaultRequestsPerMinute: 600, now });
    accountUsage = createAccountUsageLedger({ db, clock: () => clock.getTime(), flushIntervalMs: 60_000, onFlushError: () => {} });
    const deps = {
      accounts: createAccountService({ db }),
      sessions: createSessionService({ db, secret: SESSION_SECRET, now }),
      apiKeys,
      dailyUsage: createDailyUsageService({ db, nowMs: () => clock.getTime() }),
      planUsage: createPlanUsage({ db, plans, usage: accountUsage, now }),
      loginLimiter: createLoginLimiter(),
      signupLimiter: createSignupLimiter(),
      clientKey: (req: IncomingMessage) => clientKey(req, false),
      clock: now,
    };
    portal = await startPortal({ ...deps, publicUrl: 'http://portal.test:8080' });
    securePortal = await startPortal({ ...deps, publicUrl: 'https://portal.example.com' });
  });

  afterAll(async () => {
    await portal?.close();
    await securePortal?.close();
    verifier?.close();
    plans?.close();
    await accountUsage?.close();
    await apiKeys?.close();
    await db?.close();
    await testDb?.destroy();
  });

  describe('account', () => {
    let cookie: string;

    test('when someone signs up, then 201 returns the account and sets an HttpOnly, SameSite=Lax session cookie on /portal for 12 hours', async () => {
      const res = await post('/signup', { email: ' Ada@Example.com ', password: PASSWORD });
      expect(res.status).toBe(201);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = await jsonOf(res);
      expect(body).toEqual({ id: expect.any(Number), email: 'ada@example.com', createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
      const setCookies = res.headers.getSetCookie();
      expect(setCookies).toHaveLength(1);
      const expires = new Date(clock.getTime() + TWELVE_HOURS_S * 1000).toUTCString();
      expect(setCookies[0]).toMatch(/^asg_session=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+; /);
      expect(setCookies[0]!.slice(setCookies[0]!.indexOf(';'))).toBe(`; Path=/portal; Expires=${expires}; Max-Age=${TWELVE_HOURS_S}; HttpOnly; SameSite=Lax`);
      cookie = sessionCookieOf(res);
    });

    test('when the session cookie is sent, then GET /me returns the account', async () => {
      const res = await get('/me', cookie);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await jsonOf(res)).toEqual({ id: expect.any(Number), email: 'ada@example.com', createdAt: expect.any(String) });
    });

    test('when the email is already taken, in another case, then sign-up is 409 conflict', async () => {
      const res = await post('/signup', { email: 'ADA@example.com', password: 'another fine password' });
      expect(res.status).toBe(409);
      expect(await jsonOf(res)).toEqual({ code: 'conflict', message: 'An account with this email already exists.', status: 409 });
    });

    test('when an email is signed up in NFC and again in NFD, then the second is 409 conflict, and login works with either spelling', async () => {
      const composed = 'z\u00f6e@example.com';
      const decomposed = 'zo\u0308e@example.com';
      const first = await signUp(composed);
      expect(first.account.email).toBe(composed);
      const again = await post('/signup', { email: decomposed, password: 'another fine password' });
      expect(again.status).toBe(409);
      expect(await jsonOf(again)).toEqual({ code: 'conflict', message: 'An account with this email already exists.', status: 409 });
      for (const email of [decomposed, composed]) {
        const res = await post('/login', { email, password: PASSWORD });
        expect(res.status).toBe(200);
        expect(await jsonOf(res)).toEqual(first.account);
      }
    });

    test('when an email holds a zero-width space, then sign-up is 400 invalid_request and no account is made', async () => {
      const accountCount = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM accounts.accounts'))[0]!.n;
      const before = await accountCount();
      const res = await post('/signup', { email: 'ad\u200Ba@example.com', password: PASSWORD });
      expect(res.status).toBe(400);
      expect(await jsonOf(res)).toEqual({ code: 'invalid_request', message: 'email must not contain invisible or bidirectional control characters.', status: 400 });
      expect(await accountCount()).toBe(before);
    });

    test('when the password is weak, then sign-up is 400 weak_password with the reason', async () => {
      const res = await post('/signup', { email: 'weak@example.com', password: 'password123' });
      expect(res.status).toBe(400);
      expect(await jsonOf(res)).toEqual({
        code: 'weak_password',
        message: 'Password is too common or too easy to guess; choose a longer, less predictable one.',
        status: 400,
      });
    });

    test('when the password is wrong, then login is 401 without a cookie', async () => {
      const res = await post('/login', { email: 'ada@example.com', password: 'not the right one' });
      expect(res.status).toBe(401);
      expect(res.headers.getSetCookie()).toEqual([]);
      expect(await jsonOf(res)).toEqual({ code: 'unauthorized', message: 'Email or password is incorrect.', status: 401 });
    });

    test('when the email is unknown, then login gives the very same 401', async () => {
      const res = await post('/login', { email: 'nobody@example.com', password: PASSWORD });
      expect(res.status).toBe(401);
      expect(await jsonOf(res)).toEqual({ code: 'unauthorized', message: 'Email or password is incorrect.', status: 401 });
    });

    test('when the right credentials are given, then login is 200 with the account and a new session cookie, and the previous session ends', async () => {
      const res = await post('/login', { email: 'ADA@example.com', password: PASSWORD }, { cookie });
      expect(res.status).toBe(200);
      expect(await jsonOf(res)).toEqual({ id: expect.any(Number), email: 'ada@example.com', createdAt: expect.any(String) });
      const fresh = sessionCookieOf(res);
      expect(fresh).not.toBe(cookie);
      expect((await get('/me', fresh)).status).toBe(200);
      expect((await get('/me', cookie)).status).toBe(401);
      cookie = fresh;
    });

    test('when the user logs out, then 204 clears the cookie and the old cookie no longer works', async () => {
      const res = await post('/logout', undefined, { cookie });
      expect(res.status).toBe(204);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.getSetCookie()).toEqual(['asg_session=; Path=/portal; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; SameSite=Lax']);
      const me = await get('/me', cookie);
      expect(me.status).toBe(401);
      expect(await jsonOf(me)).toEqual({ code: 'unauthorized', message: 'You are not signed in, or your session has ended.', status: 401 });
    });

    test('when the session is 12 hours old, then it no longer works', async () => {
      const login = await post('/login', { email: 'ada@example.com', password: PASSWORD });
      const session = sessionCookieOf(login);
      const start = clock;
      clock = new Date(start.getTime() + TWELVE_HOURS_S * 1000);
      try {
        expect((await get('/me', session)).status).toBe(401);
      } finally {
        clock = start;
      }
    });

    test('when the portal is served over https, then the session cookie is also Secure', async () => {
      const res = await post('/login', { email: 'ada@example.com', password: PASSWORD }, {}, securePortal.url);
      expect(res.status).toBe(200);
      expect(res.headers.getSetCookie()[0]).toMatch(/; HttpOnly; Secure; SameSite=Lax$/);
    });

    test('when an email fails to log in 5 times, then the next attempt is 429 with Retry-After, even with the right password', async () => {
      await signUp('locked@example.com');
      for (let i = 0; i < 5; i++) expect((await post('/login', { email: 'locked@example.com', password: `wrong guess ${i}` })).status).toBe(401);
      const res = await post('/login', { email: 'locked@example.com', password: PASSWORD });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
      expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60);
      expect(await jsonOf(res)).toEqual({
        code: 'rate_limited',
        message: 'Too many failed sign-in attempts for this account. Try again in 15 minutes.',
        status: 429,
      });
    });
    test('when one address signs up more often than its hourly allowance, then 429 with Retry-After, and no account is made', async () => {
      const limited = await startPortal({
        accounts: createAccountService({ db }),
        sessions: createSessionService({ db, secret: SESSION_SECRET, now }),
        apiKeys,
        dailyUsage: createDailyUsageService({ db, nowMs: () => clock.getTime() }),
        planUsage: createPlanUsage({ db, plans, usage: accountUsage, now }),
        loginLimiter: createLoginLimiter(),
        signupLimiter: createSignupLimiter({ maxPerIp: 2 }),
        clientKey: (req) => clientKey(req, false),
        clock: now,
        publicUrl: 'http://portal.test:8080',
      });
      try {
        for (const email of ['first-of-two@example.com', 'second-of-two@example.com']) {
          expect((await post('/signup', { email, password: PASSWORD }, {}, limited.url)).status).toBe(201);
        }
        const res = await post('/signup', { email: 'third-of-two@example.com', password: PASSWORD }, {}, limited.url);
        expect(res.status).toBe(429);
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(59 * 60);
        expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(60 * 60);
        expect(res.headers.get('set-cookie')).toBeNull();
        expect(await jsonOf(res)).toEqual({ code: 'rate_limited', message: 'Too many sign-ups from your network. Try again in 60 minutes.', status: 429 });
        expect((await post('/login', { email: 'third-of-two@example.com', password: PASSWORD }, {}, limited.url)).status).toBe(401);
      } finally {
        await limited.close();
      }
    });
  });

  describe('API keys', () => {
    let owner: { account: { id: number }; cookie: string };
    let other: { account: { id: number }; cookie: string };

    beforeAll(async () => {
      owner = await signUp('owner@example.com');
      other = await signUp('other@example.com');
    });

    test('when a key is created, then 201 returns the full key once, and the list never shows it', async () => {
      const res = await post('/keys', { name: 'CI pipeline', environment: 'staging', expiresInDays: 90 }, { cookie: owner.cookie });
      expect(res.status).toBe(201);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const created = await jsonOf(res);
      expect(created).toEqual({
        id: expect.stringMatching(/^key_[A-Za-z0-9_-]{16}$/),
        name: 'CI pipeline',
        prefix: created.key.slice(0, 15),
        environment: 'staging',
        createdAt: clock.toISOString(),
        expiresAt: new Date(clock.getTime() + 90 * 24 * 60 * 60 * 1000).toISOString(),
        key: expect.stringMatching(/^asg_stag_[A-Za-z0-9_-]{43}$/),
      });
      await expect(verifier.verify(created.key, 'staging')).resolves.toMatchObject({ valid: true, accountId: owner.account.id });
      // As the gateway's authenticate step does after a verified call to a deprecated operation.
      apiKeys.recordUse(created.id, true);

      const list = await get('/keys', owner.cookie);
      expect(list.status).toBe(200);
      const text = await list.text();
      expect(text).not.toContain(created.key);
      expect(text).not.toContain(created.key.slice(15));
      expect(JSON.parse(text)).toEqual([
        {
          id: created.id,
          name: 'CI pipeline',
          prefix: created.prefix,
          environment: 'staging',
          status: 'active',
          expiresSoon: false,
          rolledTo: null,
          rolledFrom: null,
          createdAt: created.createdAt,
          expiresAt: created.expiresAt,
          lastUsedAt: clock.toISOString(),
          revokedAt: null,
          usage: { requests: 1, deprecatedCalls: 1, lastDeprecatedCallAt: clock.toISOString() },
        },
      ]);
    });

    test('when environment is omitted, then the key is a production key', async () => {
      const res = await post('/keys', { name: 'default env' }, { cookie: owner.cookie });
      expect(res.status).toBe(201);
      expect(await jsonOf(res)).toMatchObject({ environment: 'production', expiresAt: null, key: expect.stringMatching(/^asg_prod_/) });
    });

    test("when another account lists keys, then it sees none of the owner's", async () => {
      const res = await get('/keys', other.cookie);
      expect(await jsonOf(res)).toEqual([]);
    });

    test('when a key is revoked, then 204, the key verifies as REVOKED, and the list says revoked', async () => {
      const created = await jsonOf(await post('/keys', { name: 'to revoke' }, { cookie: owner.cookie }));
      await expect(verifier.verify(created.key, 'production')).resolves.toMatchObject({ valid: true });
      const res = await del(`/keys/${created.id}`, owner.cookie);
      expect(res.status).toBe(204);
      expect(await res.text()).toBe('');
      await expect(verifier.verify(created.key, 'production')).resolves.toEqual({ valid: false, code: 'REVOKED' });
      const listed = (await jsonOf(await get('/keys', owner.cookie))).find((k: { id: string }) => k.id === created.id);
      expect(listed).toMatchObject({ status: 'revoked', revokedAt: clock.toISOString() });
      expect((await del(`/keys/${created.id}`, owner.cookie)).status).toBe(204);
    });

    test("when another account tries to revoke a key, then it is 404 and the key keeps working", async () => {
      const created = await jsonOf(await post('/keys', { name: 'not yours' }, { cookie: owner.cookie }));
      const res = await del(`/keys/${created.id}`, other.cookie);
      expect(res.status).toBe(404);
      expect(await jsonOf(res)).toEqual({ code: 'not_found', message: 'No API key with this id exists in your account.', status: 404 });
      await expect(verifier.verify(created.key, 'production')).resolves.toMatchObject({ valid: true });
    });

    test('when a key id does not exist, then revoking it is 404', async () => {
      const res = await del('/keys/key_AAAAAAAAAAAAAAAA', owner.cookie);
      expect(res.status).toBe(404);
      expect(await jsonOf(res)).toEqual({ code: 'not_found', message: 'No API key with this id exists in your account.', status: 404 });
    });
  });

  describe('plan and usage', () => {
    test('when signed in, then GET /plan returns the plan, its limits and this month’s admitted requests, stored and not yet written', async () => {
      const { account, cookie } = await signUp('plan-usage@example.com');
      const empty = await get('/plan', cookie);
      expect(empty.status).toBe(200);
      expect(empty.headers.get('cache-control')).toBe('no-store');
      expect(await jsonOf(empty)).toEqual({ plan: 'default', requestsPerMinute: 600, requestsPerMonth: null, month: '2026-06', requestsThisMonth: 0, monthEndsAt: '2026-07-01T00:00:00.000Z' });

      await plans.put('metered', { requestsPerMinute: 100, requestsPerMonth: 1000 }, { actor: 'admin:test' });
      await db.query('UPDATE accounts.accounts SET plan = $2 WHERE id = $1', [account.id, 'metered']);
      for (let i = 0; i < 7; i++) accountUsage.recordAdmitted(String(account.id));
      await accountUsage.flush();
      for (let i = 0; i < 3; i++) accountUsage.recordAdmitted(String(account.id));
      // Last month's count is not this month's.
      await db.query(`INSERT INTO accounts.account_usage_months (account_id, month, requests) VALUES ($1, '2026-05-01', 500)`, [account.id]);
      expect(await jsonOf(await get('/plan', cookie))).toEqual({
        plan: 'metered',
        requestsPerMinute: 100,
        requestsPerMonth: 1000,
        month: '2026-06',
        requestsThisMonth: 10,
        monthEndsAt: '2026-07-01T00:00:00.000Z',
      });
    });

    test('when not signed in, then GET /plan is 401; another method is 405 with Allow', async () => {
      const anonymous = await get('/plan');
      expect(anonymous.status).toBe(401);
      expect(await jsonOf(anonymous)).toEqual({ code: 'unauthorized', message: 'You are not signed in, or your session has ended.', status: 401 });
      const { cookie } = await signUp('plan-method@example.com');
      const wrong = await post('/plan', {}, { cookie, origin: 'http://portal.test:8080' });
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get('allow')).toBe('GET, HEAD');
      expect(await jsonOf(wrong)).toEqual({ code: 'method_not_allowed', message: 'POST is not allowed here; allowed: GET, HEAD.', status: 405 });
    });
  });
});
