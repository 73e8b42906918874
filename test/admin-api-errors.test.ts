import { testDatabaseKinds } from './support/databases';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { adminClient, ADMIN_ENV, ADMIN_TOKEN, type AdminClient } from './support/admin-client';
import { jsonOf } from './support/http';

const PLAN = { requestsPerMinute: 10, requestsPerMonth: null };
const REASON_CONTROL = 'body field "reason" must not contain control characters or unpaired surrogates';

/**
 * Every admin route refuses what it cannot take with an Error body naming the parameter or field,
 * before anything changes: `{account}` is a real, active account that must stay untouched.
 */
describe.each(testDatabaseKinds())('bad input to the admin API on %s', (database) => {
  let gw: TestGateway;
  let admin: AdminClient;
  let account: number;
  beforeAll(async () => {
    gw = await startTestGateway({ database, env: { ...ADMIN_ENV } });
    admin = adminClient(gw.adminUrl!);
    account = (await signUpDeveloper(gw.url)).accountId;
  });
  afterAll(() => gw?.stop());

  const invalid = (message: string) => ({ status: 400, body: { code: 'invalid_request', message, status: 400 } });

  test.each<[string, string, unknown, string]>([
    ['GET', '/admin/v1/accounts?limit=0', undefined, 'query parameter "limit" must be >= 1'],
    ['GET', '/admin/v1/accounts?limit=101', undefined, 'query parameter "limit" must be <= 100'],
    ['GET', '/admin/v1/accounts?limit=1.5', undefined, 'query parameter "limit" must be integer'],
    ['GET', '/admin/v1/accounts?after=-1', undefined, 'query parameter "after" must be >= 0'],
    ['GET', '/admin/v1/accounts?email=', undefined, 'query parameter "email" must NOT have fewer than 1 characters'],
    ['GET', '/admin/v1/accounts?status=active', undefined, 'query parameter "status" is not supported'],
    ['GET', '/admin/v1/accounts?limit=5&limit=6', undefined, 'query parameter "limit" must not be repeated'],
    ['GET', '/admin/v1/accounts/abc', undefined, 'path parameter "id" must be integer'],
    ['GET', '/admin/v1/accounts/0', undefined, 'path parameter "id" must be >= 1'],
    ['GET', '/admin/v1/accounts/-4', undefined, 'path parameter "id" must be >= 1'],
    ['GET', '/admin/v1/accounts/12345678901234567890', undefined, 'path parameter "id" must be an integer no larger than 9007199254740991'],
    ['DELETE', '/admin/v1/accounts/{account}', { reason: 5 }, 'body field "reason" must be string'],
    ['DELETE', '/admin/v1/accounts/{account}', { because: 'x' }, 'body field "because" is not allowed'],
    ['POST', '/admin/v1/accounts/{account}/suspend', undefined, 'A JSON request body is required.'],
    ['POST', '/admin/v1/accounts/{account}/suspend', {}, 'body field "reason" is required'],
    ['POST', '/admin/v1/accounts/{account}/suspend', { reason: '' }, 'body field "reason" must NOT have fewer than 1 characters'],
    ['POST', '/admin/v1/accounts/{account}/suspend', { reason: 'x'.repeat(501) }, 'body field "reason" must NOT have more than 500 characters'],
    ['POST', '/admin/v1/accounts/{account}/suspend', { reason: 'first line\nsecond line' }, REASON_CONTROL],
    ['POST', '/admin/v1/accounts/{account}/suspend', { reason: 'nul\u0000' }, REASON_CONTROL],
    ['POST', '/admin/v1/accounts/{account}/suspend', { reason: 'abc\u202Edef' }, 'body field "reason" must not contain bidirectional embedding, override or isolate characters'],
    ['POST', '/admin/v1/accounts/{account}/suspend', { reason: ' \u200B ' }, 'body field "reason" must contain a visible character, not only spaces and invisible ones'],
    ['POST', '/admin/v1/accounts/{account}/suspend', { reason: ['x'] }, 'body field "reason" must be string'],
    ['POST', '/admin/v1/accounts/{account}/suspend', { reason: 'x', notify: true }, 'body field "notify" is not allowed'],
    ['POST', '/admin/v1/accounts/{account}/suspend', '"spam"', 'body must be object'],
    ['POST', '/admin/v1/accounts/{account}/reinstate', { reason: 'y'.repeat(501) }, 'body field "reason" must NOT have more than 500 characters'],
    ['PUT', '/admin/v1/accounts/{account}/plan', { plan: 'gold' }, 'There is no plan named "gold".'],
    ['PUT', '/admin/v1/accounts/{account}/plan', { plan: 'Default' }, 'There is no plan named "Default".'],
    ['PUT', '/admin/v1/accounts/{account}/plan', { plan: 5 }, 'body field "plan" must be string'],
    ['PUT', '/admin/v1/accounts/{account}/plan', {}, 'body field "plan" is required'],
    ['GET', '/admin/v1/keys', undefined, 'query parameter "prefix" is required'],
    ['GET', '/admin/v1/keys?prefix=asg_prod_', undefined, 'query parameter "prefix" must match ^asg_(prod|stag)_[A-Za-z0-9_-]{1,6}$'],
    ['GET', '/admin/v1/keys?prefix=asg_prod_abcdefg', undefined, 'query parameter "prefix" must match ^asg_(prod|stag)_[A-Za-z0-9_-]{1,6}$'],
    ['GET', '/admin/v1/keys?prefix=asg_prod_a&after=42', undefined, 'query parameter "after" must match ^key_[A-Za-z0-9_-]{16}$'],
    ['POST', '/admin/v1/keys/key_short/revoke', { reason: 'x' }, 'path parameter "id" must match ^key_[A-Za-z0-9_-]{16}$'],
    ['POST', '/admin/v1/keys/key_0000000000000000/revoke', {}, 'body field "reason" is required'],
    ['POST', '/admin/v1/keys/revoke-by-secret', {}, 'body field "key" is required'],
    ['POST', '/admin/v1/keys/revoke-by-secret', { key: 42 }, 'body field "key" must be string'],
    ['POST', '/admin/v1/keys/revoke-by-secret', { key: 'asg_prod_x', reason: 'leaked' }, 'body field "reason" is not allowed'],
    ['POST', '/admin/v1/keys/revoke-by-secret', { key: 'not a key' }, 'key must be a full Animal Store API key ("asg_prod_…" or "asg_stag_…").'],
    ['PUT', '/admin/v1/plans/Gold', PLAN, 'path parameter "name" must match ^[a-z0-9][a-z0-9_-]{0,39}$'],
    ['PUT', '/admin/v1/plans/-gold', PLAN, 'path parameter "name" must match ^[a-z0-9][a-z0-9_-]{0,39}$'],
    ['PUT', `/admin/v1/plans/${'g'.repeat(41)}`, PLAN, 'path parameter "name" must match ^[a-z0-9][a-z0-9_-]{0,39}$'],
    ['PUT', '/admin/v1/plans/gold', { requestsPerMinute: -1, requestsPerMonth: null }, 'body field "requestsPerMinute" must be >= 1'],
    ['PUT', '/admin/v1/plans/gold', { requestsPerMinute: 0, requestsPerMonth: null }, 'body field "requestsPerMinute" must be >= 1'],
    ['PUT', '/admin/v1/plans/gold', { requestsPerMinute: 2.5, requestsPerMonth: null }, 'body field "requestsPerMinute" must be integer'],
    ['PUT', '/admin/v1/plans/gold', { requestsPerMinute: 10_000_001, requestsPerMonth: null }, 'body field "requestsPerMinute" must be <= 10000000'],
    ['PUT', '/admin/v1/plans/gold', '{"requestsPerMinute":1e300,"requestsPerMonth":null}', 'body field "requestsPerMinute" must be <= 10000000'],
    ['PUT', '/admin/v1/plans/gold', { requestsPerMinute: '10', requestsPerMonth: null }, 'body field "requestsPerMinute" must be integer'],
    ['PUT', '/admin/v1/plans/gold', { requestsPerMinute: 10 }, 'body field "requestsPerMonth" is required'],
    ['PUT', '/admin/v1/plans/gold', { requestsPerMinute: 10, requestsPerMonth: 0 }, 'body field "requestsPerMonth" must be >= 1'],
    ['PUT', '/admin/v1/plans/gold', { requestsPerMinute: 10, requestsPerMonth: -7 }, 'body field "requestsPerMonth" must be >= 1'],
    ['PUT', '/admin/v1/plans/gold', { requestsPerMinute: 10, requestsPerMonth: 0.5 }, 'body field "requestsPerMonth" must be integer or null'],
    ['PUT', '/admin/v1/plans/gold', { requestsPerMinute: 10, requestsPerMonth: 1_000_000_000_001 }, 'body field "requestsPerMonth" must be <= 1000000000000'],
    ['PUT', '/admin/v1/plans/gold', '{"requestsPerMinute":10,"requestsPerMonth":1e400}', 'body field "requestsPerMonth" must be <= 1000000000000'],
    ['PUT', '/admin/v1/plans/gold', { ...PLAN, burst: 5 }, 'body field "burst" is not allowed'],
    ['GET', '/admin/v1/plans?all=true', undefined, 'query parameter "all" is not supported'],
    ['GET', '/admin/v1/audit?accountId=0', undefined, 'query parameter "accountId" must be >= 1'],
    ['GET', '/admin/v1/audit?after=latest', undefined, 'query parameter "after" must be integer'],
    ['GET', '/admin/v1/audit?limit=1000', undefined, 'query parameter "limit" must be <= 100'],
  ])('when %s %s is sent %j, then 400 invalid_request: %s', async (method, path, body, message) => {
    const res = await admin.send(method, path.replace('{account}', String(account)), body);
    expect({ status: res.status, body: res.body }).toEqual(invalid(message));
  });

  test('when every one of those was refused, then the account is untouched, no plan was made, and nothing was audited', async () => {
    expect((await admin.get(`/admin/v1/accounts/${account}`)).body).toMatchObject({ status: 'active', plan: 'default' });
    expect((await admin.get('/admin/v1/plans')).body.map((p: { name: string }) => p.name)).toEqual(['default']);
    expect((await admin.get(`/admin/v1/audit?accountId=${account}`)).body.map((e: { action: string }) => e.action)).toEqual(['key.created', 'key.created']);
  });

  test('when a body is not JSON, not UTF-8, compressed, or sent as another type, then 400 with its own code', async () => {
    const send = (body: string | Buffer, headers: Record<string, string>) =>
      fetch(`${gw.adminUrl}/admin/v1/accounts/${account}/suspend`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers }, body });
    const cases: Array<[string | Buffer, Record<string, string>, object]> = [
      ['{"reason": "x",}', { 'content-type': 'application/json' }, { code: 'invalid_json', message: 'The request body is not valid JSON.', status: 400 }],
      [Buffer.from([0x7b, 0x22, 0x72, 0xff, 0x22, 0x3a, 0x31, 0x7d]), { 'content-type': 'application/json' }, { code: 'invalid_json', message: 'The request body is not valid UTF-8, which JSON must be.', status: 400 }],
      ['{"reason":"x"}', { 'content-type': 'text/plain' }, { code: 'invalid_content_type', message: 'The request body must be sent with "Content-Type: application/json".', status: 400 }],
      ['{"reason":"x"}', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, { code: 'invalid_content_type', message: 'Content-Encoding "gzip" is not supported: send the JSON body uncompressed.', status: 400 }],
    ];
    for (const [body, headers, error] of cases) {
      const res = await send(body, headers);
      expect({ status: res.status, body: await jsonOf(res) }).toEqual({ status: 400, body: error });
    }
  });

  test('when a body is over 16 KiB, then 413 payload_too_large, declared or streamed', async () => {
    const big = JSON.stringify({ reason: 'x'.repeat(17 * 1024) });
    const declared = await admin.post(`/admin/v1/accounts/${account}/suspend`, big);
    expect({ status: declared.status, body: declared.body }).toEqual({ status: 413, body: { code: 'payload_too_large', message: 'The request body must not exceed 16 KiB.', status: 413 } });
    const streamed = await fetch(`${gw.adminUrl}/admin/v1/accounts/${account}/suspend`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: new Blob([big]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect({ status: streamed.status, body: await jsonOf(streamed) }).toEqual({ status: 413, body: { code: 'payload_too_large', message: 'The request body must not exceed 16 KiB.', status: 413 } });
  });

  test('when an id is unknown, then every route of that resource answers 404 with an Error body', async () => {
    await admin.put('/admin/v1/plans/known', PLAN);
    const noAccount = { status: 404, body: { code: 'not_found', message: 'No account with this id exists.', status: 404 } };
    const missing = 9_007_199_254_740_991;
    for (const [method, path, body] of [
      ['GET', `/admin/v1/accounts/${missing}`, undefined],
      ['DELETE', `/admin/v1/accounts/${missing}`, undefined],
      ['POST', `/admin/v1/accounts/${missing}/suspend`, { reason: 'x' }],
      ['POST', `/admin/v1/accounts/${missing}/reinstate`, undefined],
      ['PUT', `/admin/v1/accounts/${missing}/plan`, { plan: 'known' }],
    ] as const) {
      const res = await admin.send(method, path, body);
      expect({ route: `${method} ${path}`, status: res.status, body: res.body }).toEqual({ route: `${method} ${path}`, ...noAccount });
    }
    const key = await admin.post('/admin/v1/keys/key_AAAAAAAAAAAAAAAA/revoke', { reason: 'x' });
    expect({ status: key.status, body: key.body }).toEqual({ status: 404, body: { code: 'not_found', message: 'No API key with this id exists.', status: 404 } });
  });

  test('when a suspended account is suspended again, then 409 conflict, and its first reason stays', async () => {
    const id = (await signUpDeveloper(gw.url)).accountId;
    expect((await admin.post(`/admin/v1/accounts/${id}/suspend`, { reason: 'first' })).status).toBe(200);
    const again = await admin.post(`/admin/v1/accounts/${id}/suspend`, { reason: 'second' });
    expect({ status: again.status, body: again.body }).toEqual({ status: 409, body: { code: 'conflict', message: `Account ${id} is already suspended.`, status: 409 } });
    expect((await admin.get(`/admin/v1/accounts/${id}`)).body).toMatchObject({ status: 'suspended', suspensionReason: 'first' });
  });
});
