import { connect, type Socket } from 'node:net';
import Redis from 'ioredis';
import { freePort } from '../bench/support/processes';
import { ADMIN_DOCUMENT_PATH, loadOpenApiDocument } from '../openapi/document';
import { ADMIN_OFF } from '../gateway/wiring/create-gateway';
import { captureLogs } from './support/captured-logs';
import { deleteRedisKeys, redisTestPrefix, redisTestUrl, testDatabaseKinds } from './support/databases';
import { startTestGateway, type TestGateway } from './support/gateway-harness';
import { adminClient, ADMIN_ENV, ADMIN_TOKEN } from './support/admin-client';
import { jsonOf } from './support/http';

const OPS_TOKEN = 'ops-token-0123456789abcdefghijklmnopqr';
const CI_TOKEN = 'ci-token-0123456789abcdefghijklmnopqrst';
const CHALLENGE = 'Bearer realm="animal-store-admin"';
const NO_TOKEN = { code: 'unauthorized', message: 'The admin API requires "Authorization: Bearer <ADMIN_TOKEN>".', status: 401 };
const WRONG_TOKEN = { code: 'unauthorized', message: 'This admin token is not valid.', status: 401 };
const TOO_MANY = { code: 'rate_limited', message: 'Too many wrong admin tokens from your address. Try again in 15 minutes.', status: 429 };

/** An Error answer of the admin listener: its body, and the headers every admin answer carries. */
async function expectAdminError(res: Response, status: number, body: object): Promise<void> {
  expect({ status: res.status, body: await jsonOf(res) }).toEqual({ status, body });
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
}

describe.each(testDatabaseKinds())('the admin listener on %s', (database) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ database, env: { ADMIN_TOKEN: `ops:${OPS_TOKEN},ci:${CI_TOKEN}` } });
  });
  afterAll(() => gw?.stop());

  const call = (path: string, init: RequestInit = {}) => fetch(`${gw.adminUrl}${path}`, init);

  test('when the gateway starts with ADMIN_TOKEN, then the admin listener has its own port, not the public one', () => {
    expect(gw.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(new URL(gw.adminUrl!).port).not.toBe(new URL(gw.url).port);
  });

  test('when GET /openapi.json is asked of the admin listener without a token, then it is the admin document', async () => {
    const res = await call('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await jsonOf(res)).toEqual(JSON.parse(JSON.stringify(loadOpenApiDocument(ADMIN_DOCUMENT_PATH))));
  });

  test('when the admin listener serves its document, then with Cache-Control no-store like every admin answer, the public port\'s staying cacheable', async () => {
    for (const path of ['/openapi.json', '/openapi.yaml']) {
      const res = await call(path);
      expect({ status: res.status, cacheControl: res.headers.get('cache-control') }).toEqual({ status: 200, cacheControl: 'no-store' });
    }
    expect((await fetch(`${gw.url}/openapi.json`)).headers.get('cache-control')).toBe('public, max-age=300');
  });

  test('when /admin/v1/accounts is asked of the public port, even with an admin token, then it is 404 like any unknown path', async () => {
    for (const headers of [{}, { authorization: `Bearer ${OPS_TOKEN}` }] as Array<Record<string, string>>) {
      const res = await fetch(`${gw.url}/admin/v1/accounts`, { headers });
      expect({ status: res.status, body: await jsonOf(res) }).toEqual({
        status: 404,
        body: { code: 'not_found', message: 'Nothing at GET /admin/v1/accounts.', status: 404 },
      });
    }
    expect((await jsonOf(await fetch(`${gw.url}/openapi.json`))).info.title).toBe('Animal Store API');
  });

  test('when no Authorization header is sent, then 401 with the challenge, on known and unknown paths alike', async () => {
    for (const path of ['/admin/v1/accounts', '/admin/v1/nothing-here', '/elsewhere']) {
      const res = await call(path);
      expect(res.headers.get('www-authenticate')).toBe(CHALLENGE);
      await expectAdminError(res, 401, NO_TOKEN);
    }
    const basic = await call('/admin/v1/accounts', { headers: { authorization: `Basic ${Buffer.from(`admin:${OPS_TOKEN}`).toString('base64')}` } });
    await expectAdminError(basic, 401, NO_TOKEN);
  });

  test('when the token is wrong, too short, or the right one with a character more or less, then 401 "not valid" and nothing is done', async () => {
    for (const token of ['x', 'wrong-token-0123456789abcdefghijklmnop', `${OPS_TOKEN}x`, OPS_TOKEN.slice(0, -1), ADMIN_TOKEN]) {
      const res = await call('/admin/v1/plans/sneaky', {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{"requestsPerMinute":1,"requestsPerMonth":null}',
      });
      expect(res.headers.get('www-authenticate')).toBe(CHALLENGE);
      await expectAdminError(res, 401, WRONG_TOKEN);
    }
    const plans = await adminClient(gw.adminUrl!, OPS_TOKEN).get('/admin/v1/plans');
    expect(plans.body.map((p: { name: string }) => p.name)).not.toContain('sneaky');
  });

  test('when each labelled token is used, then each is let in, and the audit trail names its label, never the token', async () => {
    for (const [label, token] of [['ops', OPS_TOKEN], ['ci', CI_TOKEN]] as const) {
      const res = await adminClient(gw.adminUrl!, token).put(`/admin/v1/plans/by-${label}`, { requestsPerMinute: 10, requestsPerMonth: null }, { 'x-request-id': `label-${label}` });
      expect(res.status).toBe(201);
    }
    const audit = await adminClient(gw.adminUrl!, OPS_TOKEN).get('/admin/v1/audit?limit=2');
    expect(audit.body.map((e: { actor: string; targetId: string; requestId: string }) => [e.actor, e.targetId, e.requestId])).toEqual([
      ['admin:ci', 'by-ci', 'label-ci'],
      ['admin:ops', 'by-ops', 'label-ops'],
    ]);
    expect(JSON.stringify(audit.body)).not.toContain(OPS_TOKEN);
    expect(JSON.stringify(audit.body)).not.toContain(CI_TOKEN);
  });

  test('when a path is unknown or a method wrong, then 404, or 405 with Allow, both as Error bodies', async () => {
    const admin = adminClient(gw.adminUrl!, OPS_TOKEN);
    expect(await admin.get('/admin/v1/widgets')).toMatchObject({ status: 404, body: { code: 'not_found', message: 'No admin operation at GET /admin/v1/widgets.', status: 404 } });
    expect(await admin.get('/admin/v2/accounts')).toMatchObject({ status: 404, body: { code: 'not_found', message: 'No admin operation at GET /admin/v2/accounts.', status: 404 } });
    const wrongMethod = await admin.send('PATCH', '/admin/v1/accounts/1');
    expect(wrongMethod).toMatchObject({ status: 405, body: { code: 'method_not_allowed', message: 'PATCH is not allowed here; allowed: GET, HEAD, DELETE.', status: 405 } });
    expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD, DELETE');
    const post = await admin.post('/admin/v1/plans');
    expect(post).toMatchObject({ status: 405, body: { code: 'method_not_allowed', message: 'POST is not allowed here; allowed: GET, HEAD.', status: 405 } });
  });

  test('when the client sends an X-Request-Id, then the answer carries it', async () => {
    const res = await adminClient(gw.adminUrl!, OPS_TOKEN).get('/admin/v1/plans', { 'x-request-id': 'ticket-4711.a' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('ticket-4711.a');
  });
});

describe('wrong admin tokens from one address', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ env: { ...ADMIN_ENV } });
  });
  afterAll(() => gw?.stop());

  const withToken = (token: string) => fetch(`${gw.adminUrl}/admin/v1/plans`, { headers: { authorization: `Bearer ${token}` } });

  test('when 10 wrong tokens arrive within 15 minutes, then the next request is 429 with Retry-After before its token is compared, right token or not', async () => {
    for (let i = 0; i < 3; i++) expect((await withToken(`wrong-${i}`)).status).toBe(401);
    // A right token is let in and does not count as a failure.
    expect((await withToken(ADMIN_TOKEN)).status).toBe(200);
    for (let i = 3; i < 10; i++) expect((await withToken(`wrong-${i}`)).status).toBe(401);
    for (const token of [ADMIN_TOKEN, 'wrong-again']) {
      const res = await withToken(token);
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(890);
      expect(retryAfter).toBeLessThanOrEqual(900);
      await expectAdminError(res, 429, TOO_MANY);
    }
    // A request without a token guesses nothing: it is told what to send, and the contract stays readable.
    await expectAdminError(await fetch(`${gw.adminUrl}/admin/v1/plans`), 401, NO_TOKEN);
    expect((await fetch(`${gw.adminUrl}/openapi.json`)).status).toBe(200);
  });
});

describe('wrong admin tokens with REDIS_URL, across two gateways', () => {
  const prefix = redisTestPrefix();
  let a: TestGateway;
  let b: TestGateway;
  let redis: Redis;
  beforeAll(async () => {
    const env = { ...ADMIN_ENV, REDIS_URL: redisTestUrl(), REDIS_KEY_PREFIX: prefix };
    // One after the other: each opens its own PGlite, whose migrations hold this process's event loop long enough to time out the other's Redis commands.
    a = await startTestGateway({ env });
    b = await startTestGateway({ env });
    redis = new Redis(redisTestUrl());
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await deleteRedisKeys(prefix, redis);
    redis?.disconnect();
  });
  const failureKey = `${prefix}admin_auth_fail:127.0.0.1`;
  beforeEach(() => redis.del(failureKey));

  const withToken = (gw: TestGateway, token: string) => fetch(`${gw.adminUrl}/admin/v1/plans`, { headers: { authorization: `Bearer ${token}` } });
  /** A connection on which the gateway has already answered a request (one without a token, which counts nothing), so it reads the next one at once. */
  async function readConnection(gw: TestGateway): Promise<Socket> {
    const socket = connect(Number(new URL(gw.adminUrl!).port), '127.0.0.1').setEncoding('latin1');
    let text = '';
    await new Promise<void>((resolve, reject) => {
      socket.on('error', reject).on('data', function untilAnswered(chunk: string) {
        text += chunk;
        if (!text.endsWith(JSON.stringify(NO_TOKEN))) return;
        socket.off('data', untilAnswered);
        resolve();
      });
      socket.write('GET /admin/v1/plans HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    });
    return socket;
  }

  /**
   * `count` requests to each gateway, written in one turn on connections it has read from before,
   * so it has them all in flight at once (fetch would spread them over turns); how many got each status.
   */
  async function burst(gateways: TestGateway[], count: number, token: (i: number) => string): Promise<Record<number, number>> {
    const sockets = await Promise.all(gateways.flatMap((gw) => Array.from({ length: count }, () => readConnection(gw))));
    const answers = sockets.map((socket, i) => new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk: string) => (text += chunk)).on('close', () => resolve(text));
      socket.write(`GET /admin/v1/plans HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token(i % count)}\r\nConnection: close\r\n\r\n`);
    }));
    const statuses: Record<number, number> = {};
    for (const text of await Promise.all(answers)) {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
    return statuses;
  }

  test('when 5 wrong tokens go to each gateway, then both refuse the address with 429: the count is one, in Redis', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await fetch(`${a.adminUrl}/admin/v1/plans`, { headers: { authorization: `Bearer a-${i}` } })).status).toBe(401);
      expect((await fetch(`${b.adminUrl}/admin/v1/plans`, { headers: { authorization: `Bearer b-${i}` } })).status).toBe(401);
    }
    expect(Number(await redis.get(`${prefix}admin_auth_fail:127.0.0.1`))).toBe(10);
    for (const gw of [a, b]) {
      await expectAdminError(await fetch(`${gw.adminUrl}/admin/v1/plans`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }), 429, TOO_MANY);
    }
  });

  test('when 30 right tokens arrive at once at each gateway, then all 60 are let in, and nothing is counted', async () => {
    expect(await burst([a, b], 30, () => ADMIN_TOKEN)).toEqual({ 200: 60 });
    expect(await redis.get(failureKey)).toBeNull();
    expect((await withToken(a, ADMIN_TOKEN)).status).toBe(200);
  });

  test('when 30 wrong tokens arrive at once, then 10 are compared and answered 401, the other 20 get 429, and so does the right token after them', async () => {
    expect(await burst([a], 30, (i) => `wrong-${i}`)).toEqual({ 401: 10, 429: 20 });
    await expectAdminError(await withToken(a, ADMIN_TOKEN), 429, TOO_MANY);
    expect(Number(await redis.get(failureKey))).toBe(10);
  });

  test('when right tokens reach both gateways at once after 9 wrong ones, then all are let in, and the 10th wrong token still locks the address out', async () => {
    for (let i = 0; i < 9; i++) expect((await withToken(a, `wrong-${i}`)).status).toBe(401);
    expect(await burst([a, b], 30, () => ADMIN_TOKEN)).toEqual({ 200: 60 });
    expect(Number(await redis.get(failureKey))).toBe(9);
    expect((await withToken(b, 'wrong-9')).status).toBe(401);
    await expectAdminError(await withToken(a, ADMIN_TOKEN), 429, TOO_MANY);
  });
});

describe('without ADMIN_TOKEN', () => {
  let gw: TestGateway;
  let port: number;
  const { lines, logger } = captureLogs('info');
  beforeAll(async () => {
    port = await freePort();
    gw = await startTestGateway({ env: { ADMIN_PORT: String(port) }, logger });
  });
  afterAll(() => gw?.stop());

  test('when the gateway starts, then no admin listener is bound, and its start line says how to enable one', async () => {
    expect(gw.adminUrl).toBeUndefined();
    await expect(fetch(`http://127.0.0.1:${port}/openapi.json`)).rejects.toThrow();
    const listening = lines.find((line) => line.msg === 'gateway listening');
    expect(listening?.admin).toBe(ADMIN_OFF);
    expect(ADMIN_OFF).toBe('off: set ADMIN_TOKEN (at least 32 characters) to serve it on ADMIN_HOST:ADMIN_PORT (default 127.0.0.1:8081)');
  });
});
