import { startTestGateway, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

describe('health endpoints and non-API paths', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw?.stop());

  test('when /healthz is called, then 200 without a key', async () => {
    const res = await fetch(`${gw.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ status: 'ok' });
  });

  test('when /healthz and /readyz are probed, then they answer outside Express: no page headers, no ETag, nothing cached', async () => {
    for (const path of ['/healthz', '/readyz?from=lb']) {
      const res = await fetch(gw.url + path);
      await res.arrayBuffer();
      const headers = Object.fromEntries([...res.headers].filter(([name]) => !['date', 'connection', 'keep-alive', 'content-length'].includes(name)));
      expect([path, res.status, headers]).toEqual([path, 200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }]);
    }
  });

  test('when /healthz is asked with another method, then 405 naming GET and HEAD', async () => {
    const res = await fetch(`${gw.url}/healthz`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(await jsonOf(res)).toEqual({ code: 'method_not_allowed', message: 'DELETE is not allowed on /healthz.', status: 405 });
  });

  test('when /readyz is called and the store answers, then 200 with each check', async () => {
    const res = await fetch(`${gw.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ status: 'ready', checks: { database: 'ok' } });
  });

  test('when an unknown non-API path is called, then 404 with an Error body', async () => {
    const res = await fetch(`${gw.url}/nothing/here`);
    expect(res.status).toBe(404);
    expect(await jsonOf(res)).toEqual({ code: 'not_found', message: 'Nothing at GET /nothing/here.', status: 404 });
  });

  test('when a non-API path has a malformed percent-escape, then 400 with an Error body, not a crash', async () => {
    const res = await fetch(`${gw.url}/portal/api/keys/%E0%A4%A`);
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).code).toBe('invalid_request');
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  });

  test('when a path only looks like an API prefix, then it is not routed to the API', async () => {
    const res = await fetch(`${gw.url}/v10/pets`);
    expect(res.status).toBe(404);
    expect((await jsonOf(res)).message).toBe('Nothing at GET /v10/pets.');
  });
});
