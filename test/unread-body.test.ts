import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { sendEndlessBody, type EndlessBodyExchange } from './support/raw-http';

/**
 * A client whose body never ends, refused before the body is read: the gateway answers, then
 * closes the connection within seconds, instead of reading and discarding that body for as long
 * as the client sends it. Each client below sends 1 KiB every 5 ms for up to 10 s.
 */
describe('a response before the request body has ended', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw?.stop());

  const head = (request: string, extra = '') => `${request} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${extra}Transfer-Encoding: chunked\r\n\r\n`;

  /** The response's status line, headers and Error body, and that the server closed the connection within 3 s of it. */
  const expectAnsweredThenClosed = (exchange: EndlessBodyExchange, status: number, body?: object) => {
    const [headText = '', bodyText = ''] = exchange.text.split('\r\n\r\n');
    expect(headText.split('\r\n')[0]).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
    if (body) {
      expect(headText.toLowerCase()).toContain('\r\nconnection: close');
      expect(JSON.parse(bodyText)).toEqual(body);
    }
    expect(exchange.closedAfterResponseMs).toBeDefined();
    expect(exchange.closedAfterResponseMs!).toBeLessThan(3000);
  };

  test('when POST /v1/pets has no key and a body without end, then 401 with Connection: close, and the connection is closed', async () => {
    const exchange = await sendEndlessBody(gw.url, head('POST /v1/pets'));
    expectAnsweredThenClosed(exchange, 401, { code: 'unauthorized', message: expect.any(String), status: 401 });
  });

  test('when a keyed POST /v1/pets declares more than 64 KiB and sends it without end, then 413 and the connection is closed', async () => {
    const dev = await signUpDeveloper(gw.url);
    const exchange = await sendEndlessBody(gw.url, `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${dev.productionKey}\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n`);
    expectAnsweredThenClosed(exchange, 413, { code: 'payload_too_large', message: 'The request body must not exceed 64 KiB.', status: 413 });
  });

  test('when a portal API request is refused before its endless body is read, then the Error and the connection is closed', async () => {
    const exchange = await sendEndlessBody(gw.url, head('POST /portal/api/keys', `Origin: http://localhost:${new URL(gw.url).port}\r\n`));
    expectAnsweredThenClosed(exchange, 401, { code: 'unauthorized', message: expect.any(String), status: 401 });
  });

  test('when an unknown non-API path gets an endless body, then 404 and the connection is closed', async () => {
    const exchange = await sendEndlessBody(gw.url, head('POST /nowhere'));
    expectAnsweredThenClosed(exchange, 404, { code: 'not_found', message: 'Nothing at POST /nowhere.', status: 404 });
  });

  test('when the client keeps sending after the refusal, then the gateway reads and discards for 2 s before it closes, so no reset can cost the client the answer', async () => {
    const exchange = await sendEndlessBody(gw.url, head('POST /v1/pets'), { halfOpen: true });
    expectAnsweredThenClosed(exchange, 401, { code: 'unauthorized', message: expect.any(String), status: 401 });
    // Node alone destroys the socket as soon as the answer is written, and the next chunk meets a reset.
    expect(exchange.closedAfterResponseMs!).toBeGreaterThanOrEqual(1500);
  });

  test('when a success answers without reading an endless body, then the connection is closed within seconds of it too', async () => {
    const exchange = await sendEndlessBody(gw.url, head('GET /healthz'));
    expectAnsweredThenClosed(exchange, 200);
  });
});
