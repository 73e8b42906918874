import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { startRecordingUpstream } from './support/upstream-double';

/** What clients see when the upstream misbehaves: Error bodies, bounded waits, never a hang. */
describe('upstream failures and remote upstreams', () => {
  let gw: TestGateway;
  let dev: Developer;
  let hanging: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let remote: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let refusedPort: number;

  beforeAll(async () => {
    // A port that was just free and is now closed: connections are refused.
    const probe = await startRecordingUpstream(() => {});
    refusedPort = probe.port;
    await probe.close();
    hanging = await startRecordingUpstream(() => {
      /* never answers */
    });
    gw = await startTestGateway({ env: { PRODUCTION_UPSTREAM: `http://127.0.0.1:${refusedPort}`, STAGING_UPSTREAM: hanging.url, UPSTREAM_TIMEOUT_MS: '300' } });
    dev = await signUpDeveloper(gw.url);
  });
  afterAll(async () => {
    await gw?.stop();
    await hanging?.close();
    await remote?.close();
  });

  test('when the upstream refuses connections, then 502 bad_gateway', async () => {
    const res = await fetch(`${gw.url}/v1/pets`, { headers: { authorization: `Bearer ${dev.productionKey}` } });
    expect(res.status).toBe(502);
    expect(await jsonOf(res)).toEqual({ code: 'bad_gateway', message: 'The upstream could not be reached or closed the connection.', status: 502 });
  });

  test('when the upstream does not answer within UPSTREAM_TIMEOUT_MS, then 504 gateway_timeout soon after', async () => {
    const started = Date.now();
    const res = await fetch(`${gw.url}/staging/v1/pets`, { headers: { authorization: `Bearer ${dev.stagingKey}` } });
    const waited = Date.now() - started;
    expect(res.status).toBe(504);
    expect(await jsonOf(res)).toEqual({ code: 'gateway_timeout', message: 'The upstream did not answer within 300 ms.', status: 504 });
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(waited).toBeLessThan(5000);
    expect(hanging.requests.length).toBeGreaterThan(0);
  });

  test('when the upstream resets the connection mid-request, then 502', async () => {
    const resetting = await startRecordingUpstream((req) => req.socket.destroy());
    const gw2 = await startTestGateway({ env: { PRODUCTION_UPSTREAM: resetting.url } });
    try {
      const dev2 = await signUpDeveloper(gw2.url);
      const res = await fetch(`${gw2.url}/v1/pets`, { headers: { authorization: `Bearer ${dev2.productionKey}` } });
      expect(res.status).toBe(502);
      expect((await jsonOf(res)).code).toBe('bad_gateway');
    } finally {
      await gw2.stop();
      await resetting.close();
    }
  });

  describe('error statuses from the upstream', () => {
    // The deprecated GET /pets/{petId} picks the upstream's answer: every case passes the gateway's own checks.
    const answers: Record<string, [number, Record<string, string>, string]> = {
      '1': [500, { 'content-type': 'text/html' }, '<h1>Internal Server Error</h1>'],
      '2': [400, {}, ''],
      '3': [404, { 'content-type': 'application/json' }, '{"error":"not here"}'],
      '4': [404, { 'content-type': 'application/json' }, '{"code":"not_found","message":"Pet 4 was not found.","status":400}'],
      '5': [404, { 'content-type': 'application/json' }, '{"code":"not_found","message":"Pet 5 was not found.","status":404}'],
      '6': [503, { 'content-type': 'application/json', 'retry-after': '7' }, '{"code":"service_unavailable","message":"Down for a moment.","status":503}'],
      '7': [503, { 'content-type': 'text/plain', 'retry-after': '9' }, 'down for maintenance'],
      '8': [418, { 'content-type': 'text/plain' }, "I'm a teapot"],
    };
    let erring: Awaited<ReturnType<typeof startRecordingUpstream>>;
    let gw4: TestGateway;
    let auth: Record<string, string>;

    beforeAll(async () => {
      erring = await startRecordingUpstream((req, res) => {
        const [status, headers, body] = answers[req.url!.split('/').at(-1)!]!;
        res.writeHead(status, headers).end(body);
      });
      gw4 = await startTestGateway({ env: { PRODUCTION_UPSTREAM: erring.url } });
      auth = { authorization: `Bearer ${(await signUpDeveloper(gw4.url)).productionKey}` };
    });
    afterAll(async () => {
      await gw4?.stop();
      await erring?.close();
    });

    test.each([
      ['500 and an HTML page', '1', 500, 'internal_error'],
      ['400 and no body at all', '2', 400, 'invalid_request'],
      ['404 and JSON of another shape', '3', 404, 'not_found'],
      ['404 and an Error body whose status is not the response\'s', '4', 404, 'not_found'],
    ])('when the upstream answers %s, then the client gets that status with an Error body', async (_label, petId, status, code) => {
      const before = erring.requests.length;
      const res = await fetch(`${gw4.url}/v1/pets/${petId}`, { headers: auth });
      expect(erring.requests.length).toBe(before + 1);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await jsonOf(res)).toEqual({ code, message: `The upstream answered ${status} without an Error body.`, status });
    });

    test('when the upstream answers 503 in plain text, then 503 service_unavailable with its Retry-After', async () => {
      const res = await fetch(`${gw4.url}/v1/pets/7`, { headers: auth });
      expect([res.status, res.headers.get('retry-after')]).toEqual([503, '9']);
      expect(await jsonOf(res)).toEqual({ code: 'service_unavailable', message: 'The upstream answered 503 without an Error body.', status: 503 });
    });

    test('when the upstream answers a status the contract has no code for, then 502 bad_gateway', async () => {
      const res = await fetch(`${gw4.url}/v1/pets/8`, { headers: auth });
      expect(res.status).toBe(502);
      expect(await jsonOf(res)).toEqual({ code: 'bad_gateway', message: 'The upstream answered 418 without an Error body.', status: 502 });
    });

    test('when the upstream answers an error with an Error body, then it reaches the client as sent, headers included', async () => {
      const missing = await fetch(`${gw4.url}/v1/pets/5`, { headers: auth });
      expect(missing.status).toBe(404);
      expect(await missing.text()).toBe(answers['5']![2]);
      const down = await fetch(`${gw4.url}/v1/pets/6`, { headers: auth });
      expect([down.status, down.headers.get('retry-after')]).toEqual([503, '7']);
      expect(await down.text()).toBe(answers['6']![2]);
    });

    test('when a HEAD gets an error status, then the status passes through (a HEAD answer has no body to check)', async () => {
      const res = await fetch(`${gw4.url}/v1/pets/1`, { method: 'HEAD', headers: auth });
      expect(res.status).toBe(500);
    });
  });

  test('when a remote upstream has a base path, then requests are sent under it and Location/Link come back under the public prefix', async () => {
    remote = await startRecordingUpstream((req, res) => {
      if (req.method === 'POST') {
        res.writeHead(201, { 'content-type': 'application/json', location: '/api/v1/pets/77' }).end('{"id":77,"name":"Rex","categoryId":1,"status":"available"}');
      } else {
        res.writeHead(200, { 'content-type': 'application/json', link: `<http://${req.headers.host}/api/v1/pets?limit=1&after=5>; rel="next"` }).end('[]');
      }
    });
    const gw3 = await startTestGateway({ env: { PRODUCTION_UPSTREAM: `${remote.url}/api/v1`, PUBLIC_URL: 'https://gw.example.test' } });
    try {
      const dev3 = await signUpDeveloper(gw3.url);
      const auth = { authorization: `Bearer ${dev3.productionKey}` };
      const list = await fetch(`${gw3.url}/v1/pets?limit=1`, { headers: auth });
      expect(list.status).toBe(200);
      expect(list.headers.get('link')).toBe('<https://gw.example.test/v1/pets?limit=1&after=5>; rel="next"');
      expect(remote.requests.at(-1)!.url).toBe('/api/v1/pets?limit=1');
      const created = await fetch(`${gw3.url}/v1/pets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' });
      expect(created.status).toBe(201);
      expect(created.headers.get('location')).toBe('/v1/pets/77');
    } finally {
      await gw3.stop();
    }
  });
});
