import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database';
import { captureLogs } from './support/captured-logs';
import { testDatabaseKinds } from './support/databases';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { adminClient, ADMIN_ENV, nextPagePath, type AdminClient } from './support/admin-client';
import { jsonOf } from './support/http';

interface PortalKey {
  id: string;
  name: string;
  prefix: string;
  environment: string;
  createdAt: string;
}

/** The keys resource through the real admin listener: find by prefix, revoke, and the leaked-key report, whose secret is never written anywhere. */
describe.each(testDatabaseKinds())('admin keys on %s', (database) => {
  let gw: TestGateway;
  let db: Database;
  let admin: AdminClient;
  const { lines, logger } = captureLogs('trace');
  beforeAll(async () => {
    gw = await startTestGateway({ database, env: { ...ADMIN_ENV }, exposeDatabase: true, logger });
    db = gw.db!;
    admin = adminClient(gw.adminUrl!);
  });
  afterAll(() => gw?.stop());

  async function developer(): Promise<Developer & { keys: PortalKey[] }> {
    const dev = await signUpDeveloper(gw.url);
    const keys = await jsonOf(await fetch(`${gw.url}/portal/api/keys`, { headers: { cookie: dev.cookie } }));
    return { ...dev, keys };
  }
  const production = (dev: { keys: PortalKey[] }) => dev.keys.find((k) => k.environment === 'production')!;
  const adminKey = (key: PortalKey, accountId: number, changes: Record<string, unknown> = {}) => ({
    id: key.id,
    accountId,
    name: key.name,
    prefix: key.prefix,
    environment: key.environment,
    status: 'active',
    createdAt: key.createdAt,
    lastUsedAt: null,
    expiresAt: null,
    revokedAt: null,
    revocationReason: null,
    usage: { requests: 0, deprecatedCalls: 0 },
    ...changes,
  });
  const callApi = (key: string) => fetch(`${gw.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });

  test('when keys are found by the prefix the portal shows, then that key is the list, as the operator sees it', async () => {
    const dev = await developer();
    const key = production(dev);
    const res = await admin.get(`/admin/v1/keys?prefix=${key.prefix}`);
    expect(res).toMatchObject({ status: 200, body: [adminKey(key, dev.accountId)] });
    expect(res.headers.get('link')).toBeNull();
  });

  test('when more keys share a prefix than the limit, then pages follow by id with Link rel=next, the prefix kept', async () => {
    const dev = await developer();
    const stem = `asg_prod_${randomBytes(4).toString('base64url').slice(0, 5)}`;
    const ids = ['a', 'b', 'c'].map((c) => `key_${stem.slice(-5)}pagetest00${c}`);
    for (const [i, id] of ids.entries()) {
      await db.query(`INSERT INTO accounts.api_keys (id, account_id, name, environment, prefix, hash) VALUES ($1, $2, $3, 'production', $4, $5)`, [
        id,
        dev.accountId,
        `seeded ${i}`,
        `${stem}${'xyz'[i]}`,
        randomBytes(32).toString('hex'),
      ]);
    }
    const asked = `/admin/v1/keys?prefix=${stem}&limit=2`;
    const first = await admin.get(asked);
    expect(first.body.map((k: { id: string }) => k.id)).toEqual(ids.slice(0, 2));
    expect(first.headers.get('link')).toBe(`<?prefix=${stem}&limit=2&after=${ids[1]}>; rel="next"`);
    const second = await admin.get(nextPagePath(first.headers.get('link'), asked));
    expect(second.body.map((k: { id: string; name: string }) => [k.id, k.name])).toEqual([[ids[2], 'seeded 2']]);
    expect(second.headers.get('link')).toBeNull();
  });

  test('when a key is revoked with a reason, then it is refused, its row and the audit trail say why, and a second revocation is 409', async () => {
    const dev = await developer();
    const key = production(dev);
    expect((await callApi(dev.productionKey)).status).toBe(200);
    const res = await admin.post(`/admin/v1/keys/${key.id}/revoke`, { reason: 'Found in a public repository' }, { 'x-request-id': 'revoke-1' });
    expect(res.status).toBe(200);
    const revokedAt = res.body.revokedAt;
    expect(new Date(revokedAt).toISOString()).toBe(revokedAt);
    expect(res.body).toEqual(adminKey(key, dev.accountId, { status: 'revoked', revokedAt, revocationReason: 'Found in a public repository', lastUsedAt: res.body.lastUsedAt, usage: res.body.usage }));

    const refused = await callApi(dev.productionKey);
    expect({ status: refused.status, body: await jsonOf(refused) }).toEqual({ status: 401, body: { code: 'unauthorized', message: 'This API key has been revoked.', status: 401 } });
    const [row] = await db.query<{ revoked_at: Date; revocation_reason: string }>('SELECT revoked_at, revocation_reason FROM accounts.api_keys WHERE id = $1', [key.id]);
    expect({ revokedAt: new Date(row!.revoked_at).toISOString(), reason: row!.revocation_reason }).toEqual({ revokedAt, reason: 'Found in a public repository' });
    const [entry] = (await admin.get(`/admin/v1/audit?accountId=${dev.accountId}&limit=1`)).body;
    expect(entry).toMatchObject({ actor: 'admin:admin', action: 'key.revoked', targetType: 'key', targetId: key.id, accountId: dev.accountId, reason: 'Found in a public repository', requestId: 'revoke-1', details: { via: 'admin' } });

    const again = await admin.post(`/admin/v1/keys/${key.id}/revoke`, { reason: 'twice' });
    expect(again).toMatchObject({ status: 409, body: { code: 'conflict', message: `Key ${key.id} is already revoked.`, status: 409 } });
    const unknown = await admin.post('/admin/v1/keys/key_0000000000000000/revoke', { reason: 'nothing' });
    expect(unknown).toMatchObject({ status: 404, body: { code: 'not_found', message: 'No API key with this id exists.', status: 404 } });
  });

  test('when a leaked secret is reported, then its key is revoked and answered with its owner; a second report says it already was', async () => {
    const dev = await developer();
    const key = dev.keys.find((k) => k.environment === 'staging')!;
    const res = await admin.post('/admin/v1/keys/revoke-by-secret', { key: dev.stagingKey }, { 'x-request-id': 'leak-1' });
    expect(res.status).toBe(200);
    const revokedAt = res.body.key.revokedAt;
    expect(res.body).toEqual({ key: adminKey(key, dev.accountId, { status: 'revoked', revokedAt }), owner: { id: dev.accountId, email: dev.email }, alreadyRevoked: false });
    const refused = await fetch(`${gw.url}/staging/v1/pets`, { headers: { authorization: `Bearer ${dev.stagingKey}` } });
    expect(refused.status).toBe(401);
    const [entry] = (await admin.get(`/admin/v1/audit?accountId=${dev.accountId}&limit=1`)).body;
    expect(entry).toMatchObject({ action: 'key.revoked', targetId: key.id, reason: null, requestId: 'leak-1', details: { via: 'leaked-key report' } });

    const again = await admin.post('/admin/v1/keys/revoke-by-secret', { key: dev.stagingKey });
    expect(again).toMatchObject({ status: 200, body: { key: { id: key.id, status: 'revoked', revokedAt }, alreadyRevoked: true } });
    expect((await admin.get(`/admin/v1/audit?accountId=${dev.accountId}`)).body.filter((e: { action: string }) => e.action === 'key.revoked')).toHaveLength(1);
  });

  test('when the reported secret is no key of ours, then 404; when it is not a key at all, then 400', async () => {
    const unknown = await admin.post('/admin/v1/keys/revoke-by-secret', { key: `asg_prod_${randomBytes(32).toString('base64url')}` });
    expect(unknown).toMatchObject({ status: 404, body: { code: 'not_found', message: 'No API key has this secret.', status: 404 } });
    for (const key of ['hunter2', 'asg_prod_tooshort', `asg_live_${randomBytes(32).toString('base64url')}`]) {
      const res = await admin.post('/admin/v1/keys/revoke-by-secret', { key });
      expect(res).toMatchObject({ status: 400, body: { code: 'invalid_request', message: 'key must be a full Animal Store API key ("asg_prod_…" or "asg_stag_…").', status: 400 } });
    }
  });

  test('when secrets are reported, mistyped into the path or the query, or sent with a wrong token, then no log line and no stored row holds one', async () => {
    const dev = await developer();
    const secret = dev.productionKey;
    const before = lines.length;
    expect((await admin.post('/admin/v1/keys/revoke-by-secret', { key: secret })).status).toBe(200);
    expect((await admin.post(`/admin/v1/keys/${secret}/revoke`, { reason: 'pasted into the path' })).status).toBe(400);
    expect((await admin.get(`/admin/v1/keys?prefix=asg_prod_a&key=${secret}`)).status).toBe(400);
    expect((await admin.post('/admin/v1/keys/revoke-by-secret', `{"key":"${secret}",}`)).status).toBe(400);
    expect((await adminClient(gw.adminUrl!, secret).get('/admin/v1/plans')).status).toBe(401);
    const logged = lines.slice(before);
    // The request log names each of them by operation, so the test saw the lines the secret could have been in.
    expect(logged.filter((l) => l.msg === 'admin request').map((l) => [l.operation, l.status])).toEqual([
      ['revokeKeyBySecret', 200],
      ['revokeKey', 400],
      ['listKeys', 400],
      ['revokeKeyBySecret', 400],
      [null, 401],
    ]);
    const everything = JSON.stringify(lines);
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(secret.slice(9));
    for (const table of ['api_keys', 'audit_log', 'accounts', 'sessions']) {
      expect({ table, found: JSON.stringify(await db.query(`SELECT * FROM accounts.${table}`)).includes(secret.slice(9)) }).toEqual({ table, found: false });
    }
  });
});
