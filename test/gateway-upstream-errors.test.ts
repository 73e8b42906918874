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
