import type { Database } from '../db/database';
import { monthStart } from '../identity/month';
import { testDatabaseKinds } from './support/databases';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { adminClient, ADMIN_ENV, nextPagePath, type AdminClient } from './support/admin-client';
import { jsonOf } from './support/http';

const PASSWORD = 'correct horse battery staple';
const SUSPENDED_KEY = { code: 'unauthorized', message: 'The account this API key belongs to is suspended; contact support.', status: 401 };
const SIGNED_OUT = { code: 'unauthorized', message: 'You are not signed in, or your session has ended.', status: 401 };

interface Account {
  id: number;
  email: string;
  createdAt: string;
}

/** The accounts resource through the real admin listener: exact bodies, and what each change does to the rows and to the account's keys and sessions. */
describe.each(testDatabaseKinds())('admin accounts on %s', (database) => {
  let gw: TestGateway;
  let db: Database;
  let admin: AdminClient;
  beforeAll(async () => {
    gw = await startTestGateway({ database, env: { ...ADMIN_ENV }, exposeDatabase: true });
    db = gw.db!;
    admin = adminClient(gw.adminUrl!);
  });
  afterAll(() => gw?.stop());

  /** A developer with two keys, and the account as the portal shows it. */
  async function developer(): Promise<Developer & { account: Account }> {
    const dev = await signUpDeveloper(gw.url);
    const account = await jsonOf(await fetch(`${gw.url}/portal/api/me`, { headers: { cookie: dev.cookie } }));
    return { ...dev, account };
  }

  const summary = (account: Account, changes: Record<string, unknown> = {}) => ({
    id: account.id,
    email: account.email,
    createdAt: account.createdAt,
    status: 'active',
    suspendedAt: null,
    suspensionReason: null,
    plan: 'default',
    keyCount: 2,
    requestsThisMonth: 0,
    ...changes,
  });
  const callApi = (key: string) => fetch(`${gw.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
  const login = (email: string) =>
    fetch(`${gw.url}/portal/api/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: gw.url }, body: JSON.stringify({ email, password: PASSWORD }) });
  const auditOf = async (accountId: number) => (await admin.get(`/admin/v1/audit?accountId=${accountId}`)).body;

  test('when accounts are listed from after an id, then they come by ascending id as summaries, with this month\'s requests', async () => {
    const [first, second] = [await developer(), await developer()];
    await db.query('INSERT INTO accounts.account_usage_months (account_id, month, requests) VALUES ($1, $2, 1250)', [second.account.id, monthStart(new Date()).toISOString().slice(0, 10)]);
    const res = await admin.get(`/admin/v1/accounts?after=${first.account.id - 1}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('link')).toBeNull();
    expect(res.body).toEqual([summary(first.account), summary(second.account, { requestsThisMonth: 1250 })]);
  });

  test('when accounts are listed by email in another case, then the one account of that email is the list', async () => {
    const dev = await developer();
    await developer();
    expect((await admin.get(`/admin/v1/accounts?email=${encodeURIComponent(` ${dev.account.email.toUpperCase()}`)}`)).body).toEqual([summary(dev.account)]);
    expect((await admin.get('/admin/v1/accounts?email=nobody%40example.com')).body).toEqual([]);
  });

  test('when there are more accounts than the limit, then each page has Link rel=next to the following one, and the last has none', async () => {
    const devs = [await developer(), await developer(), await developer()];
    const start = devs[0]!.account.id - 1;
    const asked = `/admin/v1/accounts?limit=2&after=${start}`;
    const first = await admin.get(asked);
    expect(first.body.map((a: Account) => a.id)).toEqual([devs[0]!.account.id, devs[1]!.account.id]);
    expect(first.headers.get('link')).toBe(`<?limit=2&after=${devs[1]!.account.id}>; rel="next"`);
    const second = await admin.get(nextPagePath(first.headers.get('link'), asked));
    expect(second.body).toEqual([summary(devs[2]!.account)]);
    expect(second.headers.get('link')).toBeNull();
  });

  test('when an account is read, then it comes with every key it holds, newest first, as the operator sees them', async () => {
    const dev = await developer();
    await dev.revoke((await dev.issueKey({ name: 'old', environment: 'staging', expiresInDays: 30 })).id);
    const portalKeys = await jsonOf(await fetch(`${gw.url}/portal/api/keys`, { headers: { cookie: dev.cookie } }));
    const res = await admin.get(`/admin/v1/accounts/${dev.account.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...summary(dev.account, { keyCount: 3 }),
      keys: portalKeys.map((k: Record<string, unknown>) => ({
        id: k.id,
        accountId: dev.account.id,
        name: k.name,
        prefix: k.prefix,
        environment: k.environment,
        status: k.status,
        createdAt: k.createdAt,
        lastUsedAt: null,
        expiresAt: k.expiresAt,
        revokedAt: k.revokedAt,
        revocationReason: null,
        usage: { requests: 0, deprecatedCalls: 0 },
      })),
    });
    expect(res.body.keys.map((k: { name: string; status: string }) => [k.name, k.status])).toEqual([
      ['old', 'revoked'],
      ['staging key', 'active'],
      ['production key', 'active'],
    ]);
  });

  test('when an account is suspended, then its keys answer 401 saying so, its sessions end, it cannot sign in or create keys, and the change is audited', async () => {
    const dev = await developer();
    expect((await callApi(dev.productionKey)).status).toBe(200);
    const res = await admin.post(`/admin/v1/accounts/${dev.account.id}/suspend`, { reason: '  Scraping far beyond its plan (ticket 4711).  ' }, { 'x-request-id': 'suspend-1' });
    expect(res.status).toBe(200);
    const suspendedAt = res.body.suspendedAt;
    expect(new Date(suspendedAt).toISOString()).toBe(suspendedAt);
    expect(res.body).toEqual(summary(dev.account, { status: 'suspended', suspendedAt, suspensionReason: 'Scraping far beyond its plan (ticket 4711).' }));

    const [row] = await db.query<{ status: string; suspension_reason: string }>('SELECT status, suspension_reason FROM accounts.accounts WHERE id = $1', [dev.account.id]);
    expect(row).toEqual({ status: 'suspended', suspension_reason: 'Scraping far beyond its plan (ticket 4711).' });
    const sessions = await db.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM accounts.sessions WHERE account_id = $1', [dev.account.id]);
    expect(sessions.length).toBeGreaterThan(0);
    expect(sessions.every((s) => s.revoked_at !== null)).toBe(true);

    for (const key of [dev.productionKey]) expect(await jsonOf(await callApi(key))).toEqual(SUSPENDED_KEY);
    const staging = await fetch(`${gw.url}/staging/v1/pets`, { headers: { authorization: `Bearer ${dev.stagingKey}` } });
    expect({ status: staging.status, body: await jsonOf(staging) }).toEqual({ status: 401, body: SUSPENDED_KEY });
    const me = await fetch(`${gw.url}/portal/api/me`, { headers: { cookie: dev.cookie } });
    expect({ status: me.status, body: await jsonOf(me) }).toEqual({ status: 401, body: SIGNED_OUT });
    const create = await fetch(`${gw.url}/portal/api/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gw.url, cookie: dev.cookie },
      body: JSON.stringify({ name: 'after suspension' }),
    });
    expect({ status: create.status, body: await jsonOf(create) }).toEqual({ status: 401, body: SIGNED_OUT });
    const signIn = await login(dev.account.email);
    expect({ status: signIn.status, body: await jsonOf(signIn), cookie: signIn.headers.get('set-cookie') }).toEqual({
      status: 403,
      body: { code: 'forbidden', message: 'This account is suspended; contact support.', status: 403 },
      cookie: null,
    });
    expect((await db.query('SELECT 1 FROM accounts.api_keys WHERE account_id = $1', [dev.account.id])).length).toBe(2);

    const [entry] = await auditOf(dev.account.id);
    expect(entry).toEqual({
      id: expect.any(Number),
      at: expect.any(String),
      actor: 'admin:admin',
      action: 'account.suspended',
      targetType: 'account',
      targetId: String(dev.account.id),
      accountId: dev.account.id,
      reason: 'Scraping far beyond its plan (ticket 4711).',
      requestId: 'suspend-1',
      details: null,
    });
  });

  test('when a suspended account is reinstated, then its active keys work again, it can sign in, and a second reinstatement is 409', async () => {
    const dev = await developer();
    await dev.revoke((await dev.issueKey({ name: 'revoked before' })).id);
    const revokedBefore = (await jsonOf(await fetch(`${gw.url}/portal/api/keys`, { headers: { cookie: dev.cookie } }))).find((k: { name: string }) => k.name === 'revoked before');
    await admin.post(`/admin/v1/accounts/${dev.account.id}/suspend`, { reason: 'Checking' });
    expect(await jsonOf(await callApi(dev.productionKey))).toEqual(SUSPENDED_KEY);
    const res = await admin.post(`/admin/v1/accounts/${dev.account.id}/reinstate`, undefined, { 'x-request-id': 'reinstate-1' });
    expect(res).toMatchObject({ status: 200, body: summary(dev.account, { keyCount: 3 }) });
    expect((await callApi(dev.productionKey)).status).toBe(200);
    expect((await login(dev.account.email)).status).toBe(200);
    expect((await admin.get(`/admin/v1/accounts/${dev.account.id}`)).body.keys.find((k: { id: string }) => k.id === revokedBefore.id).status).toBe('revoked');
    const [entry] = await auditOf(dev.account.id);
    expect(entry).toMatchObject({ actor: 'admin:admin', action: 'account.reinstated', reason: null, requestId: 'reinstate-1', details: null });

    const again = await admin.post(`/admin/v1/accounts/${dev.account.id}/reinstate`, { reason: 'twice' });
    expect(again).toMatchObject({ status: 409, body: { code: 'conflict', message: `Account ${dev.account.id} is not suspended.`, status: 409 } });
  });

  test('when an account is moved to an existing plan, then it is on that plan, and the change names both plans in the audit trail', async () => {
    const dev = await developer();
    expect((await admin.put('/admin/v1/plans/partner', { requestsPerMinute: 1200, requestsPerMonth: 1_000_000 })).status).toBeLessThan(300);
    const res = await admin.put(`/admin/v1/accounts/${dev.account.id}/plan`, { plan: 'partner' }, { 'x-request-id': 'plan-1' });
    expect(res).toMatchObject({ status: 200, body: summary(dev.account, { plan: 'partner' }) });
    expect(await db.query('SELECT plan FROM accounts.accounts WHERE id = $1', [dev.account.id])).toEqual([{ plan: 'partner' }]);
    const [entry] = await auditOf(dev.account.id);
    expect(entry).toMatchObject({ action: 'account.plan_changed', requestId: 'plan-1', reason: null, details: { from: 'default', to: 'partner' } });
    expect((await callApi(dev.productionKey)).status).toBe(200);
  });

  test('when an account is erased, then it and its sessions, keys and usage rows are gone, its keys are refused, and the audit trail keeps only its id', async () => {
    const dev = await developer();
    const id = dev.account.id;
    expect((await callApi(dev.productionKey)).status).toBe(200);
    await db.query('INSERT INTO accounts.account_usage_months (account_id, month, requests) VALUES ($1, $2, 7)', [id, '2026-01-01']);
    const res = await fetch(`${gw.adminUrl}/admin/v1/accounts/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ADMIN_ENV.ADMIN_TOKEN}`, 'content-type': 'application/json', 'x-request-id': 'erase-1' },
      body: JSON.stringify({ reason: 'Erasure requested by the holder' }),
    });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');

    for (const table of ['accounts', 'sessions', 'api_keys', 'account_usage_months']) {
      const column = table === 'accounts' ? 'id' : 'account_id';
      expect({ table, rows: await db.query(`SELECT 1 FROM accounts.${table} WHERE ${column} = $1`, [id]) }).toEqual({ table, rows: [] });
    }
    const invalid = await callApi(dev.productionKey);
    expect({ status: invalid.status, body: await jsonOf(invalid) }).toEqual({ status: 401, body: { code: 'unauthorized', message: 'Invalid API key.', status: 401 } });
    expect((await login(dev.account.email)).status).toBe(401);
    expect(await admin.get(`/admin/v1/accounts/${id}`)).toMatchObject({ status: 404, body: { code: 'not_found', message: 'No account with this id exists.', status: 404 } });

    const entries = await auditOf(id);
    expect(entries.map((e: { action: string; details: unknown }) => [e.action, e.details])).toEqual([
      ['account.deleted', { keys: 2 }],
      ['key.created', null],
      ['key.created', null],
    ]);
    expect(entries[0]).toMatchObject({ actor: 'admin:admin', targetId: String(id), accountId: id, reason: 'Erasure requested by the holder', requestId: 'erase-1' });
    const rows = await db.query('SELECT * FROM accounts.audit_log WHERE account_id = $1', [id]);
    expect(JSON.stringify(rows)).not.toContain(dev.account.email);
    expect(JSON.stringify(rows)).not.toContain('production key');
  });
});
