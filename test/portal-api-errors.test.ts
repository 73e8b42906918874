import { createAuditLog } from '../identity/audit-log';
import type { Database } from '../db/database';
import { createAccountService } from '../identity/account-service';
import { createAccountUsageLedger } from '../identity/account-usage-ledger';
import { createPlanUsage } from '../identity/plan-usage';
import { createApiKeyService, type ApiKeyService } from '../identity/api-key-service';
import { createDailyUsageService } from '../identity/daily-usage-service';
import { migrateKeys } from '../identity/migrations';
import { createLocalRevocationBus } from '../identity/revocation-bus';
import { createSessionService } from '../identity/session-service';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from './support/databases';
import { jsonOf } from './support/http';
import { PORTAL_PUBLIC_URL, startPortalApi, type PortalApiServer } from './support/portal-api-server';


/** Asserts an Error body with the exact code, message and status, sent as uncacheable JSON. */
async function expectError(res: Response, status: number, code: string, message: string): Promise<void> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(await jsonOf(res)).toEqual({ code, message, status });
}

/** The account's plan and usage as the portal reads them; the default plan's limits (these tests read no plan). */
function planUsageOn(db: Database) {
  const usage = createAccountUsageLedger({ db, clock: Date.now, flushIntervalMs: 60_000, onFlushError: () => {} });
  const defaultPlan = { name: 'default', requestsPerMinute: 600, requestsPerMonth: null, createdAt: new Date(0), updatedAt: new Date(0) };
  return createPlanUsage({ db, plans: { get: () => defaultPlan }, usage, now: () => new Date() });
}

describe.each(testDatabaseKinds())('portal API error paths on %s', (kind) => {
  let testDb: TestDatabase;
  let db: Database;
  let apiKeys: ApiKeyService;
  let server: PortalApiServer;
  let base: string;
  let origin: string;
  let cookie: string;

  const send = (method: string, path: string, init: { headers?: Record<string, string>; body?: string | Uint8Array } = {}) =>
    fetch(base + path, { method, headers: init.headers, body: init.body });
  const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    send('POST', path, { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    db = await testDb.open();
    await migrateKeys(db);
    apiKeys = createApiKeyService({ db, audit: createAuditLog({ db }), hashSecret: 'errors-test-hash-secret-0123456789abcdef', revocations: createLocalRevocationBus() });
    server = await startPortalApi(db, { apiKeys, planUsage: planUsageOn(db) });
    ({ origin, base } = server);
    const signup = await postJson('/signup', { email: 'errors@example.com', password: 'correct horse battery staple' });
    expect(signup.status).toBe(201);
    cookie = signup.headers.getSetCookie()[0]!.split(';', 1)[0]!;
  });

  afterAll(async () => {
    await server?.stop();
    await apiKeys?.close();
    await db?.close();
    await testDb?.destroy();
  });

  describe('request bodies', () => {
    test('when the body has no Content-Type, then 400 invalid_content_type', async () => {
      const res = await send('POST', '/login', { body: '{"email":"a@b.co","password":"x"}' });
      await expectError(res, 400, 'invalid_content_type', 'The request body must be sent with "Content-Type: application/json".');
    });

    test('when the body is form-encoded, then 400 invalid_content_type', async () => {
      const res = await send('POST', '/login', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=a%40b.co' });
      await expectError(res, 400, 'invalid_content_type', 'The request body must be sent with "Content-Type: application/json".');
    });

    test('when the JSON is malformed, then 400 invalid_json', async () => {
      const res = await send('POST', '/login', { headers: { 'content-type': 'application/json' }, body: '{"email": "a@b.co",' });
      await expectError(res, 400, 'invalid_json', 'The request body is not valid JSON.');
    });

    test('when the body is not valid UTF-8 or is compressed, then 400 before any field is read', async () => {
      const latin1 = Buffer.from('{"email":"caf\u00e9@example.com","password":"correct horse battery staple"}', 'latin1');
      const res = await send('POST', '/signup', { headers: { 'content-type': 'application/json' }, body: latin1 });
      await expectError(res, 400, 'invalid_json', 'The request body is not valid UTF-8, which JSON must be.');
      const compressed = await send('POST', '/login', { headers: { 'content-type': 'application/json', 'content-encoding': 'br' }, body: '{}' });
      await expectError(compressed, 400, 'invalid_content_type', 'Content-Encoding "br" is not supported: send the JSON body uncompressed.');
    });

    test('when the JSON is not an object, then 400 invalid_request', async () => {
      await expectError(await postJson('/login', ['a@b.co']), 400, 'invalid_request', 'Request body must be a JSON object.');
      await expectError(await postJson('/login', 'a@b.co'), 400, 'invalid_request', 'Request body must be a JSON object.');
    });

    test('when the body carries an unknown field, then 400 invalid_request naming it', async () => {
      const res = await postJson('/signup', { email: 'x@example.com', password: 'correct horse battery staple', admin: true });
      await expectError(res, 400, 'invalid_request', 'Unknown field "admin"; allowed fields: email, password.');
    });

    test('when a required field is missing or not a string, then 400 invalid_request naming it', async () => {
      await expectError(await postJson('/login', { email: 'x@example.com' }), 400, 'invalid_request', 'password is required and must be a string.');
      await expectError(await postJson('/signup', { email: 42, password: 'p' }), 400, 'invalid_request', 'email is required and must be a string.');
    });

    test('when the body is larger than 16 KiB, then 413 payload_too_large', async () => {
      const res = await postJson('/login', { email: 'x@example.com', password: 'p'.repeat(17 * 1024) });
      await expectError(res, 413, 'payload_too_large', 'The request body must not exceed 16 KiB.');
    });

    test('when the body is exactly at the limit, then it is read', async () => {
      const filler = 'p'.repeat(16 * 1024 - JSON.stringify({ email: 'nobody@example.com', password: '' }).length);
      const res = await postJson('/login', { email: 'nobody@example.com', password: filler });
      expect(res.status).toBe(401);
    });

    test('when key fields are invalid, then 400 invalid_request naming the field', async () => {
      const cases: Array<[unknown, string]> = [
        [{}, 'name is required and must be a string.'],
        [{ name: 'n'.repeat(101) }, 'name must be a string of 1 to 100 characters.'],
        [{ name: 'ok', environment: 'prod' }, 'environment must be "production" or "staging".'],
        [{ name: 'ok', environment: 1 }, 'environment must be a string.'],
        [{ name: 'ok', expiresInDays: '30' }, 'expiresInDays must be a number.'],
        [{ name: 'ok', expiresInDays: 0 }, 'expiresInDays must be an integer from 1 to 3650.'],
        [{ name: 'ok', key: 'asg_prod_mine' }, 'Unknown field "key"; allowed fields: name, environment, expiresInDays.'],
      ];
      for (const [body, message] of cases) await expectError(await postJson('/keys', body, { cookie }), 400, 'invalid_request', message);
      expect(await jsonOf(await send('GET', '/keys', { headers: { cookie } }))).toEqual([]);
    });
  });

  describe('sessions', () => {
    const notSignedIn = 'You are not signed in, or your session has ended.';

    test('when no session cookie is sent, then /me and /keys are 401', async () => {
      await expectError(await send('GET', '/me'), 401, 'unauthorized', notSignedIn);
      await expectError(await send('GET', '/keys'), 401, 'unauthorized', notSignedIn);
      await expectError(await send('DELETE', '/keys/key_AAAAAAAAAAAAAAAA'), 401, 'unauthorized', notSignedIn);
    });

    test('when creating a key without a session, then 401 comes before any body check', async () => {
      await expectError(await send('POST', '/keys', { body: 'not json' }), 401, 'unauthorized', notSignedIn);
    });

    test('when the session cookie is forged or garbage, then 401', async () => {
      const [header, payload] = cookie.slice('asg_session='.length).split('.');
      const forged = `asg_session=${header}.${payload}.${'A'.repeat(43)}`;
      await expectError(await send('GET', '/me', { headers: { cookie: forged } }), 401, 'unauthorized', notSignedIn);
      await expectError(await send('GET', '/me', { headers: { cookie: 'asg_session=garbage; other=1' } }), 401, 'unauthorized', notSignedIn);
    });
  });

  describe('cross-origin requests', () => {
    const forbidden = 'Cross-origin requests are not allowed; use the portal from its own origin.';

    test('when a POST comes from another origin, then 403 forbidden and nothing happens', async () => {
      const res = await postJson('/keys', { name: 'csrf' }, { cookie, origin: 'https://evil.example' });
      await expectError(res, 403, 'forbidden', forbidden);
      expect(await jsonOf(await send('GET', '/keys', { headers: { cookie } }))).toEqual([]);
    });

    test('when a DELETE or logout comes from another origin, then 403 forbidden', async () => {
      await expectError(await send('DELETE', '/keys/key_AAAAAAAAAAAAAAAA', { headers: { cookie, origin: 'https://evil.example' } }), 403, 'forbidden', forbidden);
      await expectError(await send('POST', '/logout', { headers: { cookie, origin: 'null' } }), 403, 'forbidden', forbidden);
      expect((await send('GET', '/me', { headers: { cookie } })).status).toBe(200);
    });

    test('when Origin is absent but Sec-Fetch-Site says another site, then 403 forbidden', async () => {
      for (const site of ['cross-site', 'same-site']) {
        await expectError(await postJson('/login', { email: 'a@b.co', password: 'x' }, { 'sec-fetch-site': site }), 403, 'forbidden', forbidden);
      }
    });

    test('when Origin is the configured public origin or the origin the request was sent to, then it is allowed', async () => {
      for (const allowed of [PORTAL_PUBLIC_URL, origin]) {
        const res = await postJson('/login', { email: `nobody-${allowed.length}@example.com`, password: 'x' }, { origin: allowed });
        expect(res.status).toBe(401);
      }
      const sameOrigin = await postJson('/login', { email: 'nobody-same@example.com', password: 'x' }, { 'sec-fetch-site': 'same-origin' });
      expect(sameOrigin.status).toBe(401);
    });

    test('when a GET comes from another origin, then it is not refused (it changes nothing)', async () => {
      const res = await send('GET', '/me', { headers: { cookie, origin: 'https://evil.example' } });
      expect(res.status).toBe(200);
    });
  });

  describe('failures', () => {
    test('when the store fails, then 500 internal_error without details, and the cause goes to the logger', async () => {
      const brokenDb = await createTestDatabase('pglite');
      const broken = await brokenDb.open();
      await migrateKeys(broken);
      const sessions = createSessionService({ db: broken, secret: 'errors-test-session-secret-0123456789abc' });
      const [account] = await broken.query<{ id: number }>(`INSERT INTO accounts.accounts (email, password_hash) VALUES ('b@example.com', 'x') RETURNING id`);
      const { token } = await sessions.start(account!.id);
      await broken.close();

      const logged: object[] = [];
      const brokenServer = await startPortalApi(broken, {
        accounts: createAccountService({ db: broken }),
        sessions,
        apiKeys,
        dailyUsage: createDailyUsageService({ db: broken, nowMs: Date.now }),
        planUsage: planUsageOn(broken),
        logger: { error: (obj: object) => logged.push(obj) },
      });
      try {
        const url = `${brokenServer.base}/me`;
        await expectError(await fetch(url, { headers: { cookie: `asg_session=${token}` } }), 500, 'internal_error', 'An unexpected error occurred.');
        expect(logged).toEqual([{ requestId: expect.any(String), code: 'internal_error', err: expect.any(Error), method: 'GET', path: '/portal/api/me' }]);
      } finally {
        await brokenServer.stop();
        await brokenDb.destroy();
      }
    });
  });

  describe('routes', () => {
    test('when the path is unknown, then 404 not_found', async () => {
      await expectError(await send('GET', '/nope'), 404, 'not_found', 'No portal API operation at GET /portal/api/nope.');
      await expectError(await send('POST', '/keys/key_AAAAAAAAAAAAAAAA/rotate'), 404, 'not_found', 'No portal API operation at POST /portal/api/keys/key_AAAAAAAAAAAAAAAA/rotate.');
    });

    test('when the method is not one the path supports, then 405 with Allow', async () => {
      const res = await send('PUT', '/keys', { headers: { cookie } });
      expect(res.headers.get('allow')).toBe('GET, POST, HEAD');
      await expectError(res, 405, 'method_not_allowed', 'PUT is not allowed here; allowed: GET, POST, HEAD.');
      const login = await send('GET', '/login');
      expect(login.headers.get('allow')).toBe('POST');
      await expectError(login, 405, 'method_not_allowed', 'GET is not allowed here; allowed: POST.');
    });
  });
});
