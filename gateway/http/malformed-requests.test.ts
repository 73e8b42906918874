import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendRaw, type RawExchange } from '../../test/support/raw-http';
import { answerMalformedRequests, refuseMalformedHead } from './malformed-requests';

/**
 * Requests Node's parser refuses, against a plain server with the gateway's handlers: each gets
 * an Error body and a closed connection, where Node alone sends a bare status line.
 */
describe('malformed requests', () => {
  let server: Server;
  let url: string;
  const handled: string[] = [];
  /** The codes the server reported for its metrics, in order. */
  const counted: string[] = [];

  beforeAll(async () => {
    // Short timeouts, so that a request that never finishes its headers is refused within the test.
    server = createServer({ requireHostHeader: false, requestTimeout: 300, headersTimeout: 300, connectionsCheckingInterval: 50 }, (req, res) => {
      if (refuseMalformedHead(req, res, (code) => counted.push(code))) return;
      handled.push(`${req.method} ${req.url}`);
      if (req.method === 'POST') return void req.resume().on('end', () => res.end('read'));
      // /slow answers a turn later, as the gateway's pipeline does: the request's response is not yet under way when the parser fails.
      if (req.url === '/slow') setTimeout(() => res.end('ok'), 20);
      else res.end('ok');
    });
    answerMalformedRequests(server, (code) => counted.push(code));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    handled.length = 0;
    counted.length = 0;
  });

  /** An Error body, whole, on a connection the server then closed. */
  const expectRefusal = (answer: RawExchange, status: number, code: string, message: string) => {
    expect(answer.status).toBe(status);
    expect(answer.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', connection: 'close' });
    expect(JSON.parse(answer.body)).toEqual({ code, message, status });
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
  };

  test.each([
    ['a request line that is not HTTP', 'GARBAGE\r\n\r\n', 400, 'invalid_request', 'The request is not valid HTTP/1.1 (HPE_INVALID_METHOD).'],
    [
      'both Content-Length and Transfer-Encoding (request smuggling)',
      'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'invalid_request',
      'The request is not valid HTTP/1.1 (HPE_INVALID_TRANSFER_ENCODING).',
    ],
    ['a header without a colon', 'GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n', 400, 'invalid_request', 'The request is not valid HTTP/1.1 (HPE_INVALID_HEADER_TOKEN).'],
    ['headers over 16 KiB', `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`, 431, 'headers_too_large', 'The request line and headers must not exceed 16 KiB.'],
  ])('when a request has %s, then an Error body and the connection closes, and no handler runs', async (_label, bytes, status, code, message) => {
    expectRefusal(await sendRaw(url, bytes), status, code, message);
    expect(handled).toEqual([]);
  });

  test('when a chunked body breaks off into bytes that are no chunk, then that request is refused with an Error body at once, not left waiting for its body', async () => {
    expectRefusal(await sendRaw(url, 'POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nZZ\r\n', 2000), 400, 'invalid_request', 'The request is not valid HTTP/1.1 (HPE_INVALID_CHUNK_SIZE).');
    expect(handled).toEqual(['POST /upload']);
  });

  test('when the method is CONNECT, then 400 with an Error body and the connection closes, where Node alone closes it without a word', async () => {
    expectRefusal(await sendRaw(url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'), 400, 'invalid_request', 'CONNECT is not supported: the gateway is not a forward proxy.');
    expect(handled).toEqual([]);
    expect(counted).toEqual(['invalid_request']);
  });

  test('when a request refused before the handler has an X-Request-Id, then the Error answer echoes it, and gets a fresh one otherwise', async () => {
    const anonymous = await sendRaw(url, 'GET / HTTP/1.1\r\nHost: x\r\nhost: y\r\n\r\n');
    expect(anonymous.status).toBe(400);
    expect(anonymous.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const twoHosts = await sendRaw(url, 'GET / HTTP/1.1\r\nHost: x\r\nhost: y\r\nX-Request-Id: trace-400\r\n\r\n');
    expect(twoHosts.status).toBe(400);
    expect(twoHosts.headers['x-request-id']).toBe('trace-400');
    expect(handled).toEqual([]);
  });

  test('when the headers never finish, then 408 request_timeout with an Error body', async () => {
    expectRefusal(await sendRaw(url, 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: '), 408, 'request_timeout', 'The request did not arrive in time.');
    expect(counted).toEqual(['request_timeout']);
  });

  test('when an HTTP/1.1 request has no Host, then 400 with an Error body and the connection closes; HTTP/1.0 needs none', async () => {
    expectRefusal(await sendRaw(url, 'GET /v1/pets HTTP/1.1\r\n\r\n'), 400, 'invalid_request', 'An HTTP/1.1 request must have a Host header.');
    expect(handled).toEqual([]);

    const old = await sendRaw(url, 'GET /old HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
    expect(handled).toEqual(['GET /old']);
  });

  test.each([
    ['HTTP/2.0', 'GET / HTTP/2.0\r\nHost: x\r\n\r\n', 'HTTP/2.0 is not supported: send HTTP/1.1.'],
    ['HTTP/0.9', 'GET / HTTP/0.9\r\nHost: x\r\n\r\n', 'HTTP/0.9 is not supported: send HTTP/1.1.'],
    ['a bare request line (read as HTTP/0.9)', 'GET /\r\n\r\n', 'HTTP/0.9 is not supported: send HTTP/1.1.'],
    ['two Host headers', 'GET / HTTP/1.1\r\nHost: x\r\nhost: y\r\n\r\n', 'A request must have exactly one Host header.'],
  ])('when a request Node parses has %s, then 400 with an Error body, counted, the connection closes, and no handler runs', async (_label, bytes, message) => {
    expectRefusal(await sendRaw(url, bytes), 400, 'invalid_request', message);
    expect(handled).toEqual([]);
    expect(counted).toEqual(['invalid_request']);
  });

  test.each(['/first', '/slow'])('when a malformed request follows a good one (%s) on the same connection, then the good one is answered first', async (path) => {
    const answer = await sendRaw(url, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n`);
    expect(answer.text.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
    expect(answer.text).toContain('\r\n\r\nok');
    expect(answer.text.endsWith('{"code":"invalid_request","message":"The request is not valid HTTP/1.1 (HPE_INVALID_METHOD).","status":400}')).toBe(true);
    expect(handled).toEqual([`GET ${path}`]);
  });
});
