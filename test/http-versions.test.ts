import { startTestGateway, type TestGateway } from './support/gateway-harness';
import { sendRaw, type RawExchange } from './support/raw-http';

/**
 * The gateway serves HTTP/1.0 and HTTP/1.1 only, with exactly one Host. Node's parser lets
 * `HTTP/2.0` and `HTTP/0.9` request lines through (a bare `GET /` line followed by a blank line
 * reads as HTTP/0.9), and keeps the first of two Host headers: the gateway refuses them itself.
 */
describe('HTTP versions and Host headers the gateway does not serve', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ env: { HEADERS_TIMEOUT_MS: '1000' } });
  });
  afterAll(() => gw?.stop());

  const expectRefusal = (answer: RawExchange, message: string) => {
    expect(answer.status).toBe(400);
    expect(answer.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', connection: 'close' });
    expect(JSON.parse(answer.body)).toEqual({ code: 'invalid_request', message, status: 400 });
  };

  test.each([
    ['GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n', 'HTTP/2.0 is not supported: send HTTP/1.1.'],
    ['GET /v1/pets HTTP/2.0\r\nHost: x\r\n\r\n', 'HTTP/2.0 is not supported: send HTTP/1.1.'],
    ['GET /healthz HTTP/0.9\r\nHost: x\r\n\r\n', 'HTTP/0.9 is not supported: send HTTP/1.1.'],
    ['GET /healthz\r\n\r\n', 'HTTP/0.9 is not supported: send HTTP/1.1.'],
    ['GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n', 'A request must have exactly one Host header.'],
    ['GET /v1/pets HTTP/1.1\r\nhost: x\r\nHOST: x\r\n\r\n', 'A request must have exactly one Host header.'],
    ['GET /healthz HTTP/1.0\r\nHost: x\r\nHost: y\r\n\r\n', 'A request must have exactly one Host header.'],
  ])('when the request is %j, then 400 invalid_request with an Error body and the connection closes', async (bytes, message) => {
    expectRefusal(await sendRaw(gw.url, bytes, 3000), message);
  });

  test('when an HTTP/0.9 request is a bare request line, then Node waits for headers, and the gateway answers 408 once HEADERS_TIMEOUT_MS has passed', async () => {
    const answer = await sendRaw(gw.url, 'GET /healthz\r\n', 4000);
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toEqual({ code: 'request_timeout', message: 'The request did not arrive in time.', status: 408 });
  });

  test('when HTTP/1.0 and HTTP/1.1 requests have one Host, then they are served', async () => {
    for (const version of ['1.0', '1.1']) {
      const answer = await sendRaw(gw.url, `GET /healthz HTTP/${version}\r\nHost: x\r\nConnection: close\r\n\r\n`, 3000);
      expect(answer.status).toBe(200);
    }
  });
});
