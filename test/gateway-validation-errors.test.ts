import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { expectMatchesContract } from './support/contract';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { sendRaw } from './support/raw-http';
import { startRecordingUpstream } from './support/upstream-double';

/**
 * Bad input is refused by the gateway from the OpenAPI document, with an exact Error body,
 * before the upstream is touched. The upstream here records every request that reaches it.
 */
describe('request validation at the gateway', () => {
  let gw: TestGateway;
  let dev: Developer;
  let upstream: Awaited<ReturnType<typeof startRecordingUpstream>>;

  beforeAll(async () => {
    upstream = await startRecordingUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    });
    gw = await startTestGateway({ env: { PRODUCTION_UPSTREAM: upstream.url } });
    dev = await signUpDeveloper(gw.url);
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  const send = (method: string, path: string, body?: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    fetch(gw.url + path, { method, headers: { authorization: `Bearer ${dev.productionKey}`, ...headers }, body });

  /** Node's client holds the body back until the gateway answers `100 Continue` (fetch cannot send Expect). */
  const requestExpectingContinue = (method: string, path: string, body?: string) =>
    new Promise<{ continued: boolean; status: number; requestId: string | undefined }>((resolve, reject) => {
      const headers: Record<string, string | number> = { authorization: `Bearer ${dev.productionKey}`, expect: '100-continue' };
      if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      const req = request(gw.url + path, { method, headers, agent: false });
      let continued = false;
      req.on('continue', () => {
        continued = true;
        req.end(body);
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve({ continued, status: res.statusCode!, requestId: res.headers['x-request-id'] as string | undefined }));
      });
      req.on('error', reject);
      if (body === undefined) req.end();
    });

  /** Sends, then asserts the exact Error body and that nothing reached the upstream meanwhile. */
  const expectRefused = async (request: () => Promise<Response>, status: number, code: string, message: string, operationId = 'listPets') => {
    const before = upstream.requests.length;
    const res = await request();
    expect(res.status).toBe(status);
    const body = await jsonOf(res);
    expect(body).toEqual({ code, message, status });
    if (status === 400 || status === 413) expectMatchesContract(operationId, status, body);
    expect(upstream.requests.length).toBe(before);
  };

  test.each([
    ['limit=0', 'query parameter "limit" must be >= 1'],
    ['limit=101', 'query parameter "limit" must be <= 100'],
    ['limit=abc', 'query parameter "limit" must be integer'],
    ['limit=1.5', 'query parameter "limit" must be integer'],
    ['limit=', 'query parameter "limit" must be integer'],
    ['limit=-3', 'query parameter "limit" must be >= 1'],
    ['limit=1e2', 'query parameter "limit" must be integer'],
    ['limit=5&limit=6', 'query parameter "limit" must not be repeated'],
    ['status=lost', 'query parameter "status" must be one of: available, pending, sold'],
    ['status=SOLD', 'query parameter "status" must be one of: available, pending, sold'],
    ['after=-1', 'query parameter "after" must be >= 0'],
    ['sort=name', 'query parameter "sort" is not supported'],
  ])('when GET /pets?%s, then 400 invalid_request naming the parameter', async (query, message) => {
    await expectRefused(() => send('GET', `/v1/pets?${query}`), 400, 'invalid_request', message);
  });

  test('when a valid list request arrives, then it reaches the upstream with the key stripped and, filling the shared cache, as no caller', async () => {
    const before = upstream.requests.length;
    const res = await send('GET', '/v1/pets?limit=100&status=sold');
    expect(res.status).toBe(200);
    expect(upstream.requests.length).toBe(before + 1);
    const seen = upstream.requests.at(-1)!;
    expect(seen.url).toBe('/pets?limit=100&status=sold');
    expect(seen.headers.authorization).toBeUndefined();
    // Its answer is stored for every key: the upstream is not told whose list to tailor (docs/security.md).
    expect(seen.headers['x-api-key-id']).toBeUndefined();
    expect(seen.headers['x-consumer-id']).toBeUndefined();
    expect(seen.headers['x-request-id']).toBe(res.headers.get('x-request-id'));
  });

  test('when the request target is in absolute form, then it is routed by its path like any other', async () => {
    const before = upstream.requests.length;
    const bytes = `GET http://gateway.example/v1/pets?limit=4 HTTP/1.1\r\nHost: gateway.example\r\nAuthorization: Bearer ${dev.productionKey}\r\nConnection: close\r\n\r\n`;
    const answer = await sendRaw(gw.url, bytes, 3000);
    expect(answer.status).toBe(200);
    expect(upstream.requests.length).toBe(before + 1);
    expect(upstream.requests.at(-1)!.url).toBe('/pets?limit=4');
  });

  test.each([
    ['{}', 'body field "name" is required'],
    ['{"name":"Rex"}', 'body field "categoryId" is required'],
    ['{"categoryId":1}', 'body field "name" is required'],
    ['{"name":"Rex","categoryId":1,"id":7}', 'body field "id" is not allowed'],
    ['{"name":"Rex","categoryId":1,"colour":"brown"}', 'body field "colour" is not allowed'],
    ['{"name":"","categoryId":1}', 'body field "name" must NOT have fewer than 1 characters'],
    ['{"name":"   ","categoryId":1}', 'body field "name" must not be blank'],
    ['{"name":"<201 characters>","categoryId":1}', 'body field "name" must NOT have more than 200 characters'],
    ['{"name":"R\\u0000x","categoryId":1}', 'body field "name" must not contain control characters or unpaired surrogates'],
    ['{"name":"R\\u0007x","categoryId":1}', 'body field "name" must not contain control characters or unpaired surrogates'],
    ['{"name":"R\\ud800x","categoryId":1}', 'body field "name" must not contain control characters or unpaired surrogates'],
    ['{"name":"Rex\\u202Egnp.exe","categoryId":1}', 'body field "name" must not contain bidirectional embedding, override or isolate characters'],
    ['{"name":"\\u2066Rex\\u2069","categoryId":1}', 'body field "name" must not contain bidirectional embedding, override or isolate characters'],
    ['{"name":"\\u200B","categoryId":1}', 'body field "name" must contain a visible character, not only spaces and invisible ones'],
    ['{"name":" \\u3164\\u200D\\uFEFF ","categoryId":1}', 'body field "name" must contain a visible character, not only spaces and invisible ones'],
    ['{"name":42,"categoryId":1}', 'body field "name" must be string'],
    ['{"name":"Rex","categoryId":0}', 'body field "categoryId" must be >= 1'],
    ['{"name":"Rex","categoryId":-4}', 'body field "categoryId" must be >= 1'],
    ['{"name":"Rex","categoryId":1.5}', 'body field "categoryId" must be integer'],
    ['{"name":"Rex","categoryId":"1"}', 'body field "categoryId" must be integer'],
    ['{"name":"Rex","categoryId":9007199254740993}', 'body field "categoryId" must be <= 9007199254740991'],
    ['{"name":"Rex","categoryId":1,"status":"lost"}', 'body field "status" must be one of: available, pending, sold'],
    ['[]', 'body must be object'],
    ['"Rex"', 'body must be object'],
    ['null', 'body must be object'],
  ])('when POST /pets has body %s, then 400 invalid_request', async (body, message) => {
    const sent = body.replace('<201 characters>', 'x'.repeat(201));
    await expectRefused(() => send('POST', '/v1/pets', sent), 400, 'invalid_request', message, 'createPet');
  });

  test('when a message holds a NUL, then 400 invalid_request before the upstream', async () => {
    const message = 'body field "message" must not contain control characters (tab and line breaks aside) or unpaired surrogates';
    await expectRefused(() => send('POST', '/v1/messages', '{"message":"a\\u0000b"}'), 400, 'invalid_request', message, 'createMessage');
  });

  test.each([
    ['a right-to-left override', '{"message":"line one\\n\\u202Eowt enil"}', 'body field "message" must not contain bidirectional embedding, override or isolate characters'],
    ['only line breaks and zero-width spaces', '{"message":"\\u200B\\n\\u200B\\r\\n"}', 'body field "message" must contain a visible character, not only spaces and invisible ones'],
  ])('when a message holds %s, then 400 invalid_request before the upstream', async (_label, body, message) => {
    await expectRefused(() => send('POST', '/v1/messages', body), 400, 'invalid_request', message, 'createMessage');
  });

  test.each([
    ['headers over 16 KiB', `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`, 431, 'headers_too_large', 'The request line and headers must not exceed 16 KiB.'],
    [
      'both Content-Length and Transfer-Encoding',
      'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 30\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'invalid_request',
      'The request is not valid HTTP/1.1 (HPE_INVALID_TRANSFER_ENCODING).',
    ],
    ['no Host header', 'GET /v1/pets HTTP/1.1\r\n\r\n', 400, 'invalid_request', 'An HTTP/1.1 request must have a Host header.'],
    [
      'a chunked body that breaks off into bytes that are no chunk',
      'POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer <key>\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"nam\r\nZZ\r\n',
      400,
      'invalid_request',
      'The request is not valid HTTP/1.1 (HPE_INVALID_CHUNK_SIZE).',
    ],
  ])('when a request has %s, then the gateway answers with an Error body, closes the connection and never calls the upstream', async (_label, bytes, status, code, message) => {
    const before = upstream.requests.length;
    const answer = await sendRaw(gw.url, bytes.replace('<key>', dev.productionKey), 3000);
    expect(answer.status).toBe(status);
    expect(answer.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', connection: 'close' });
    expect(JSON.parse(answer.body)).toEqual({ code, message, status });
    expect(upstream.requests.length).toBe(before);
  });

  test('when a request expects anything but 100-continue, then 417 expectation_failed with an Error body, on the API and the portal alike', async () => {
    const before = upstream.requests.length;
    for (const [target, extra] of [
      ['/v1/pets', `Authorization: Bearer ${dev.productionKey}\r\n`],
      ['/portal/api/login', ''],
    ]) {
      const body = '{"name":"Rex","categoryId":1}';
      const bytes = `POST ${target} HTTP/1.1\r\nHost: x\r\n${extra}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: tea\r\nConnection: close\r\n\r\n${body}`;
      const answer = await sendRaw(gw.url, bytes, 3000);
      expect(answer.status).toBe(417);
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      const message = 'Only "Expect: 100-continue" is supported; this request expected "tea".';
      expect(JSON.parse(answer.body)).toEqual({ code: 'expectation_failed', message, status: 417 });
      if (target!.startsWith('/v1/')) {
        // Refused after the key and its budget, the 417 carries their headers like any other refusal.
        expect(answer.headers['x-request-id']).toEqual(expect.any(String));
        expect(answer.headers.ratelimit).toMatch(/^"minute";r=\d+;t=\d+$/);
        expect(answer.headers['ratelimit-policy']).toEqual(expect.any(String));
      }
    }
    expect(upstream.requests.length).toBe(before);
  });

  test('when a request expects 100-continue, then it is continued and proxied without Expect, with the key replaced, and the upstream connection stays usable', async () => {
    const body = '{"name":"Patient","categoryId":2}';
    const before = upstream.requests.length;
    const first = await requestExpectingContinue('POST', '/v1/pets', body);
    expect(first).toMatchObject({ continued: true, status: 200 });
    const seen = upstream.requests.at(-1)!;
    expect(upstream.requests.length).toBe(before + 1);
    expect(seen).toMatchObject({ method: 'POST', url: '/pets', body });
    expect(seen.headers.expect).toBeUndefined();
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers['x-api-key-id']).toMatch(/^key_/);
    expect(seen.headers['x-request-id']).toBe(first.requestId);
    // A list that misses the cache, and a create, on the upstream connection the first request used.
    const listed = await requestExpectingContinue('GET', '/v1/pets?limit=3');
    expect(listed.status).toBe(200);
    expect(upstream.requests.at(-1)!.headers.authorization).toBeUndefined();
    const created = await send('POST', '/v1/pets', '{"name":"After","categoryId":2}');
    expect(created.status).toBe(200);
    expect(upstream.requests.at(-1)).toMatchObject({ method: 'POST', body: '{"name":"After","categoryId":2}' });
  });

  test('when the body is not valid UTF-8, then 400 invalid_json (it is not stored with replacement characters)', async () => {
    const body = Buffer.concat([Buffer.from('{"name":"R'), Buffer.from([0xff]), Buffer.from('x","categoryId":1}')]);
    const message = 'The request body is not valid UTF-8, which JSON must be.';
    await expectRefused(() => send('POST', '/v1/pets', body), 400, 'invalid_json', message, 'createPet');
  });

  test('when the body has a content coding, then 400 invalid_content_type naming it (it was never decompressed)', async () => {
    const body = gzipSync('{"name":"Rex","categoryId":1}');
    const message = 'Content-Encoding "gzip" is not supported: send the JSON body uncompressed.';
    const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
    await expectRefused(() => send('POST', '/v1/pets', body, headers), 400, 'invalid_content_type', message, 'createPet');
  });

  test('when the body is not valid JSON, then 400 invalid_json', async () => {
    await expectRefused(() => send('POST', '/v1/pets', '{"name": "Rex",'), 400, 'invalid_json', 'The request body is not valid JSON.', 'createPet');
  });

  test('when Content-Type is missing or not JSON, then 400 invalid_content_type', async () => {
    const message = 'The request body must be sent with "Content-Type: application/json".';
    await expectRefused(() => send('POST', '/v1/pets', '{"name":"Rex","categoryId":1}', {}), 400, 'invalid_content_type', message, 'createPet');
    await expectRefused(() => send('POST', '/v1/pets', '{"name":"Rex","categoryId":1}', { 'content-type': 'text/plain' }), 400, 'invalid_content_type', message, 'createPet');
  });

  test('when the body is empty, then 400 invalid_request', async () => {
    await expectRefused(() => send('POST', '/v1/pets', ''), 400, 'invalid_request', 'A JSON request body is required.', 'createPet');
  });

  test('when the body is larger than 64 KiB, then 413 payload_too_large', async () => {
    const big = JSON.stringify({ name: 'Rex', categoryId: 1, pad: 'x'.repeat(70 * 1024) });
    await expectRefused(() => send('POST', '/v1/pets', big), 413, 'payload_too_large', 'The request body must not exceed 64 KiB.', 'createPet');
  });

  test('when a chunked body grows past 64 KiB, then 413 too (no Content-Length to trust)', async () => {
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 80; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(1024)));
        controller.close();
      },
    });
    const request = () =>
      fetch(`${gw.url}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${dev.productionKey}`, 'content-type': 'application/json' },
        body: chunks,
        duplex: 'half',
      } as RequestInit);
    await expectRefused(request, 413, 'payload_too_large', 'The request body must not exceed 64 KiB.', 'createPet');
  });

  test('when a valid pet is posted, then exactly the validated bytes reach the upstream', async () => {
    const body = '{"name":"Rex","categoryId":1,"status":"sold"}';
    const before = upstream.requests.length;
    await send('POST', '/v1/pets', body);
    expect(upstream.requests.length).toBe(before + 1);
    expect(upstream.requests.at(-1)).toMatchObject({ method: 'POST', url: '/pets', body });
  });

  test.each([
    ['abc', 'path parameter "petId" must be integer'],
    ['0', 'path parameter "petId" must be >= 1'],
    ['-1', 'path parameter "petId" must be >= 1'],
    ['1.5', 'path parameter "petId" must be integer'],
    ['99999999999999999999', 'path parameter "petId" must be <= 9007199254740991'],
  ])('when GET /pets/%s, then 400 invalid_request', async (petId, message) => {
    await expectRefused(() => send('GET', `/v1/pets/${petId}`), 400, 'invalid_request', message, 'getPet');
  });

  test('when an unknown path under /v1 is called, then 404 with an Error body', async () => {
    await expectRefused(() => send('GET', '/v1/owners'), 404, 'not_found', 'No operation at GET /v1/owners.');
    await expectRefused(() => send('GET', '/v1'), 404, 'not_found', 'No operation at GET /v1/.');
  });

  test('when a method is not defined for a path, then 405 with Allow', async () => {
    const res = await send('DELETE', '/v1/pets');
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
    await expectRefused(() => send('DELETE', '/v1/pets'), 405, 'method_not_allowed', 'DELETE is not allowed on /v1/pets; allowed: GET, HEAD, POST.');
    const put = await send('PUT', '/v1/pets/1', '{}');
    expect(put.headers.get('allow')).toBe('GET, HEAD');
    expect(put.status).toBe(405);
  });
});
