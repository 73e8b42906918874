import { request, type IncomingHttpHeaders } from 'node:http';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { sendRaw } from './support/raw-http';
import { startRecordingUpstream } from './support/upstream-double';

const PET = { id: 3, name: 'Rex', categoryId: 1, status: 'available' };

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** node:http, because fetch refuses to send the hop-by-hop headers a forger would. */
function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** What a key holder sends to make the upstream believe it is someone, somewhere, or something else. */
function forged(key: string): Record<string, string> {
  return {
    authorization: `Bearer ${key}`,
    'proxy-authorization': `Bearer ${key}`,
    cookie: 'asg_session=someone-elses',
    'x-forwarded-host': 'evil.example',
    'x-forwarded-proto': 'http',
    forwarded: 'for=6.6.6.6;host=evil.example;proto=http',
    'x-real-ip': '6.6.6.6',
    'x-forwarded': 'for=6.6.6.6',
    'x-original-forwarded-for': '6.6.6.6',
    'x-host': 'evil.example',
    'x-original-host': 'evil.example',
    via: '1.1 evil.example',
    'x-api-key-id': 'key_forged',
    'x-consumer-id': '1',
    'x-http-method-override': 'DELETE',
    connection: 'keep-alive, X-Hop-Secret',
    'x-hop-secret': 'shh',
    te: 'trailers',
    upgrade: 'websocket',
    'x-request-id': 'client-chosen-id',
    accept: 'application/json',
    'user-agent': 'forger/1.0',
  };
}

/**
 * The upstream request is rebuilt by the gateway (nginx's proxy_set_header discipline), checked
 * against a recording upstream behind a real gateway, with and without a trusted proxy in front.
 */
describe.each([
  { trustProxy: false, sentFor: '203.0.113.7', forwardedFor: '127.0.0.1', forwarded: 'for=127.0.0.1', realIp: '127.0.0.1' },
  {
    trustProxy: true,
    sentFor: '203.0.113.7, 198.51.100.9',
    forwardedFor: '203.0.113.7, 198.51.100.9, 127.0.0.1',
    forwarded: 'for=203.0.113.7, for=198.51.100.9, for=127.0.0.1',
    realIp: '198.51.100.9',
  },
])('what reaches the upstream with TRUST_PROXY=$trustProxy', ({ trustProxy, sentFor, forwardedFor, forwarded, realIp }) => {
  let upstream: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let gw: TestGateway;
  let key: { id: string; key: string };
  let accountId: string;
  let cookie: string;

  beforeAll(async () => {
    upstream = await startRecordingUpstream((req, res) => {
      if (req.method === 'POST') res.writeHead(201, { 'content-type': 'application/json', location: '/pets/3' }).end(JSON.stringify(PET));
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(PET));
    });
    gw = await startTestGateway({ env: { PRODUCTION_UPSTREAM: upstream.url, PUBLIC_URL: 'https://api.example.test', TRUST_PROXY: String(trustProxy) } });
    const dev = await signUpDeveloper(gw.url);
    cookie = dev.cookie;
    key = await dev.issueKey({ name: 'forger' });
    accountId = String(((await (await fetch(`${gw.url}/portal/api/me`, { headers: { cookie } })).json()) as { id: unknown }).id);
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  test('when a key holder forges credentials, forwarding, identity and hop-by-hop headers, then the upstream receives exactly the gateway-written set and its end-to-end headers', async () => {
    const reply = await send(`${gw.url}/v1/pets/3`, 'GET', { ...forged(key.key), 'x-forwarded-for': sentFor });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual(PET);
    const seen = upstream.requests.at(-1)!;
    expect(seen.url).toBe('/pets/3');
    expect(seen.headers).toEqual({
      host: `127.0.0.1:${upstream.port}`,
      connection: 'keep-alive',
      accept: 'application/json',
      'user-agent': 'forger/1.0',
      'x-request-id': 'client-chosen-id',
      'x-api-key-id': key.id,
      'x-consumer-id': accountId,
      'x-forwarded-for': forwardedFor,
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'api.example.test',
      forwarded: `${forwarded};proto=https;host=api.example.test`,
      'x-real-ip': realIp,
    });
    expect(reply.headers['x-request-id']).toBe('client-chosen-id');
    expect(JSON.stringify(seen.headers)).not.toContain(key.key);
  });

  test('when a create body repeats a member, then the upstream receives the object that was validated, serialised again, and never the other value', async () => {
    const raw = '{"name":"Shown to the validator","categoryId":1,"name":"Rex"}';
    const reply = await send(`${gw.url}/v1/pets`, 'POST', { ...forged(key.key), 'x-forwarded-for': sentFor, 'content-type': 'application/json; charset=utf-8', 'content-md5': 'bogus' }, raw);
    expect(reply.status).toBe(201);
    const seen = upstream.requests.at(-1)!;
    expect(seen.method).toBe('POST');
    expect(seen.body).toBe('{"name":"Rex","categoryId":1}');
    expect(seen.body).not.toContain('Shown to the validator');
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['content-length']).toBe(String(Buffer.byteLength(seen.body)));
    expect(seen.headers['content-md5']).toBeUndefined();
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers['x-forwarded-for']).toBe(forwardedFor);
  });

  test('when a GET or HEAD declares a body, then 400 invalid_request and the upstream is not called', async () => {
    const before = upstream.requests.length;
    const get = await send(`${gw.url}/v1/pets/3`, 'GET', { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', 'content-length': '17' }, '{"smuggled":true}');
    expect(get.status).toBe(400);
    expect(JSON.parse(get.body)).toEqual({ code: 'invalid_request', message: 'GET /v1/pets/{petId} takes no request body.', status: 400 });
    const head = await sendRaw(
      gw.url,
      `HEAD /v1/pets HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key.key}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    );
    expect(head.status).toBe(400);
    expect(upstream.requests.length).toBe(before);
  });
});
