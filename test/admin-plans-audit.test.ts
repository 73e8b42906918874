import type { Database } from '../db/database';
import { testDatabaseKinds } from './support/databases';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { adminClient, ADMIN_ENV, ADMIN_TOKEN, nextPagePath, type AdminClient } from './support/admin-client';
import { sendRaw } from './support/raw-http';

/** Plans and the audit trail through the real admin listener. */
describe.each(testDatabaseKinds())('admin plans and audit on %s', (database) => {
  let gw: TestGateway;
  let db: Database;
  let admin: AdminClient;
  beforeAll(async () => {
    gw = await startTestGateway({ database, env: { ...ADMIN_ENV, RATE_LIMIT_PER_MINUTE: '240' }, exposeDatabase: true });
    db = gw.db!;
    admin = adminClient(gw.adminUrl!);
  });
  afterAll(() => gw?.stop());

  const isoNow = () => expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  test('when plans are listed before any is set, then the default plan follows RATE_LIMIT_PER_MINUTE, with no monthly quota', async () => {
    const res = await admin.get('/admin/v1/plans');
    expect(res).toMatchObject({ status: 200, body: [{ name: 'default', requestsPerMinute: 240, requestsPerMonth: null, createdAt: isoNow(), updatedAt: isoNow() }] });
  });

  test('when a plan is put for the first time, then 201 with it; when put again, then 200 with the new limits, created the same, updated later', async () => {
    const created = await admin.put('/admin/v1/plans/startup', { requestsPerMinute: 100, requestsPerMonth: 50_000 }, { 'x-request-id': 'plan-create' });
    expect(created).toMatchObject({ status: 201, body: { name: 'startup', requestsPerMinute: 100, requestsPerMonth: 50_000, createdAt: isoNow() } });
    expect(created.body.updatedAt).toBe(created.body.createdAt);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const changed = await admin.put('/admin/v1/plans/startup', { requestsPerMinute: 150, requestsPerMonth: null }, { 'x-request-id': 'plan-change' });
    expect(changed).toMatchObject({ status: 200, body: { name: 'startup', requestsPerMinute: 150, requestsPerMonth: null, createdAt: created.body.createdAt } });
    expect(Date.parse(changed.body.updatedAt)).toBeGreaterThan(Date.parse(created.body.createdAt));

    expect(await db.query("SELECT requests_per_minute, requests_per_month, set_by FROM accounts.plans WHERE name = 'startup'")).toEqual([
      { requests_per_minute: 150, requests_per_month: null, set_by: 'admin' },
    ]);
    const entries = (await admin.get('/admin/v1/audit?limit=2')).body;
    expect(entries).toEqual([
      {
        id: expect.any(Number),
        at: isoNow(),
        actor: 'admin:admin',
        action: 'plan.updated',
        targetType: 'plan',
        targetId: 'startup',
        accountId: null,
        reason: null,
        requestId: 'plan-change',
        details: { requestsPerMinute: 150, requestsPerMonth: null, was: { requestsPerMinute: 100, requestsPerMonth: 50_000 } },
      },
      expect.objectContaining({ action: 'plan.created', targetId: 'startup', requestId: 'plan-create', details: { requestsPerMinute: 100, requestsPerMonth: 50_000 } }),
    ]);
    expect((await admin.get('/admin/v1/plans')).body.map((p: { name: string }) => p.name)).toEqual(['default', 'startup']);
  });

  test('when the default plan is set by an admin, then it has those limits, no longer RATE_LIMIT_PER_MINUTE\'s', async () => {
    expect(await admin.put('/admin/v1/plans/default', { requestsPerMinute: 300, requestsPerMonth: 1_000_000_000_000 })).toMatchObject({
      status: 200,
      body: { name: 'default', requestsPerMinute: 300, requestsPerMonth: 1_000_000_000_000 },
    });
    expect((await admin.get('/admin/v1/plans')).body[0]).toMatchObject({ name: 'default', requestsPerMinute: 300 });
    expect(await db.query("SELECT requests_per_minute, set_by FROM accounts.plans WHERE name = 'default'")).toEqual([{ requests_per_minute: 300, set_by: 'admin' }]);
  });

  test('when the audit trail is read page by page, then newest first, each page linking the next with its filter kept', async () => {
    const dev = await signUpDeveloper(gw.url); // two key.created entries
    await admin.post(`/admin/v1/accounts/${dev.accountId}/suspend`, { reason: 'one' });
    await admin.post(`/admin/v1/accounts/${dev.accountId}/reinstate`, { reason: 'two' });
    const asked = `/admin/v1/audit?accountId=${dev.accountId}&limit=3`;
    const first = await admin.get(asked);
    expect(first.body.map((e: { action: string; reason: string | null }) => [e.action, e.reason])).toEqual([
      ['account.reinstated', 'two'],
      ['account.suspended', 'one'],
      ['key.created', null],
    ]);
    const lastId = first.body[2].id;
    expect(first.headers.get('link')).toBe(`<?accountId=${dev.accountId}&limit=3&after=${lastId}>; rel="next"`);
    const second = await admin.get(nextPagePath(first.headers.get('link'), asked));
    expect(second.body).toEqual([
      {
        id: expect.any(Number),
        at: isoNow(),
        actor: `account:${dev.accountId}`,
        action: 'key.created',
        targetType: 'key',
        targetId: expect.stringMatching(/^key_/),
        accountId: dev.accountId,
        reason: null,
        requestId: null,
        details: { name: 'production key', environment: 'production', expiresAt: null },
      },
    ]);
    expect(second.body[0].id).toBeLessThan(lastId);
    expect(second.headers.get('link')).toBeNull();
    const all = (await admin.get('/admin/v1/audit?limit=100')).body.map((e: { id: number }) => e.id);
    expect(all).toEqual([...all].sort((a: number, b: number) => b - a));
  });

  test('when the audit trail is paged under a host name other than the bind address, then Link is relative and, resolved against the request URL, gives the next page', async () => {
    for (let i = 0; i < 3; i++) await admin.put(`/admin/v1/plans/by-name-${i}`, { requestsPerMinute: 10, requestsPerMonth: null });
    const origin = 'http://admin.internal:9000';
    // fetch() sends the Host of its URL whatever the headers say: the request is written by hand.
    const get = (path: string) =>
      sendRaw(gw.adminUrl!, `GET ${path} HTTP/1.1\r\nHost: ${new URL(origin).host}\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nConnection: close\r\n\r\n`);
    const first = await get('/admin/v1/audit?limit=2');
    expect(first.status).toBe(200);
    const firstIds = (JSON.parse(first.body) as { id: number }[]).map((e) => e.id);
    expect(first.headers.link).toBe(`<?limit=2&after=${firstIds[1]}>; rel="next"`);
    const next = new URL(/^<([^>]+)>/.exec(first.headers.link!)![1]!, `${origin}/admin/v1/audit?limit=2`);
    expect(next.origin).toBe(origin);
    const second = await get(`${next.pathname}${next.search}`);
    expect(second.status).toBe(200);
    const secondIds = (JSON.parse(second.body) as { id: number }[]).map((e) => e.id);
    expect([...firstIds, ...secondIds]).toEqual((await admin.get('/admin/v1/audit?limit=4')).body.map((e: { id: number }) => e.id));
  });
});
