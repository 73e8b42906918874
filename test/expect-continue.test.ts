import { connect } from 'node:net';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { sendRaw } from './support/raw-http';

/**
 * `Expect: 100-continue` asks the server whether to send the body. The gateway decides first: a
 * request it refuses (no key, too large) gets its refusal and no `100 Continue` before it; one
 * it will read gets the 100 when the body is about to be read.
 */
describe('Expect: 100-continue', () => {
  let gw: TestGateway;
  let dev: Developer;
  beforeAll(async () => {
    gw = await startTestGateway();
    dev = await signUpDeveloper(gw.url);
  });
  afterAll(() => gw?.stop());

  const portalOrigin = () => `http://localhost:${new URL(gw.url).port}`;

  /** Headers only: a client expecting 100-continue holds its body back until invited. */
  const expecting = (target: string, extra: string, length: number) =>
    `POST ${target} HTTP/1.1\r\nHost: x\r\n${extra}Content-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

  test.each([
    ['POST /v1/pets without a key', () => expecting('/v1/pets', '', 30), 401, 'unauthorized'],
    ['POST /v1/pets declaring more than 64 KiB', () => expecting('/v1/pets', `Authorization: Bearer ${dev.productionKey}\r\n`, 70_000), 413, 'payload_too_large'],
    ['POST /portal/api/keys without a session', () => expecting('/portal/api/keys', `Origin: ${portalOrigin()}\r\n`, 30), 401, 'unauthorized'],
  ])('when %s expects 100-continue, then the refusal comes with no 100 Continue before it, and the connection closes', async (_label, head, status, code) => {
    const answer = await sendRaw(gw.url, head(), 5000);
    expect(answer.text).not.toContain('HTTP/1.1 100');
    expect(answer.status).toBe(status);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toMatchObject({ code, status });
  });

  test('when a portal request that will be read expects 100-continue, then 100 Continue comes first, and the body sent after it is answered', async () => {
    const body = JSON.stringify({ email: 'nobody@example.com', password: 'wrong password, long enough' });
    const { hostname, port } = new URL(gw.url);
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(expecting('/portal/api/login', `Origin: ${portalOrigin()}\r\nConnection: close\r\n`, body.length)));
      let received = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        received += chunk;
        if (received === 'HTTP/1.1 100 Continue\r\n\r\n') socket.write(body);
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
    });
    expect(text.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 401 ')).toBe(true);
    expect(JSON.parse(text.slice(text.lastIndexOf('\r\n\r\n') + 4))).toEqual({ code: 'unauthorized', message: 'Email or password is incorrect.', status: 401 });
  });
});
