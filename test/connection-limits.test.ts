import { get } from 'node:http';
import { connect, type Socket } from 'node:net';
import { captureLogs } from './support/captured-logs';
import { startTestGateway, type TestGateway } from './support/gateway-harness';
import { sendRaw } from './support/raw-http';
import { until } from './support/until';

interface IdleSocket {
  socket: Socket;
  closed: boolean;
}

/** A connection that sends nothing, from `localAddress`; `closed` turns true when the server closes it. */
function openIdle(url: string, localAddress: string): Promise<IdleSocket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const idle: IdleSocket = { socket: connect({ port: Number(port), host: hostname, localAddress }), closed: false };
    idle.socket.once('connect', () => resolve(idle));
    idle.socket.once('error', reject);
    idle.socket.on('error', () => {});
    idle.socket.once('close', () => (idle.closed = true));
  });
}

/** GET /healthz on a fresh connection from `localAddress`. */
function healthFrom(url: string, localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(`${url}/healthz`, { localAddress, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    }).on('error', reject);
  });
}

/**
 * Idle connections cannot use up the gateway's file descriptors: each client address keeps at
 * most MAX_CONNECTIONS_PER_CLIENT, the server at most MAX_CONNECTIONS (closing its oldest idle one
 * to admit a new client), and idle or silent connections are closed within seconds.
 */
describe('connection limits', () => {
  describe('with low caps (20 per client, 50 in all) and long timeouts', () => {
    let gw: TestGateway;
    const opened: IdleSocket[] = [];
    const { lines, logger } = captureLogs('warn');
    beforeAll(async () => {
      const env = { MAX_CONNECTIONS: '50', MAX_CONNECTIONS_PER_CLIENT: '20', HEADERS_TIMEOUT_MS: '60000', KEEP_ALIVE_TIMEOUT_MS: '60000' };
      gw = await startTestGateway({ env, logger });
    });
    afterAll(async () => {
      for (const { socket } of opened) socket.destroy();
      await gw?.stop();
    });

    const openMany = async (count: number, localAddress: string) => {
      const batch = await Promise.all(Array.from({ length: count }, () => openIdle(gw.url, localAddress)));
      opened.push(...batch);
      return batch;
    };

    test('when one address opens more idle connections than its cap, then the excess are closed at once, the rest stay, and /healthz from another address answers', async () => {
      const first = await openMany(30, '127.0.0.1');
      await until('10 connections over the cap to be closed', () => first.filter((s) => s.closed).length === 10, 3000);
      // A moment for any further wrongful close to show.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(first.filter((s) => s.closed)).toHaveLength(10);
      expect(await healthFrom(gw.url, '127.0.0.2')).toBe(200);
      // One line for the ten, naming the address.
      const warnings = lines.filter((l) => l.msg === 'connection cap reached: closing new connections');
      expect(warnings).toEqual([expect.objectContaining({ cap: 'per_client', address: '127.0.0.1', closedSinceWarning: 1, maxConnections: 50, maxPerAddress: 20 })]);
    });

    test('when the server is at its cap with idle connections, then a new client is admitted by closing the oldest idle one', async () => {
      const first = opened.filter((s) => !s.closed);
      expect(first).toHaveLength(20);
      const more = [...(await openMany(20, '127.0.0.3')), ...(await openMany(10, '127.0.0.4'))];
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(more.filter((s) => s.closed)).toHaveLength(0);
      // 50 open now: the health check takes the place of the oldest.
      expect(await healthFrom(gw.url, '127.0.0.2')).toBe(200);
      await until('the oldest idle connection to be closed', () => first[0]!.closed, 3000);
      expect(first.filter((s) => s.closed)).toHaveLength(1);
      expect(more.filter((s) => s.closed)).toHaveLength(0);
    });
  });

  describe('with every connection busy (caps 6 in all, 4 per client)', () => {
    let gw: TestGateway;
    const opened: IdleSocket[] = [];
    beforeAll(async () => {
      const env = { MAX_CONNECTIONS: '6', MAX_CONNECTIONS_PER_CLIENT: '4', HEADERS_TIMEOUT_MS: '60000', REQUEST_TIMEOUT_MS: '60000' };
      gw = await startTestGateway({ env });
    });
    afterAll(async () => {
      for (const { socket } of opened) socket.destroy();
      await gw?.stop();
    });

    /** A connection whose request is in progress: its body is promised and never comes. */
    const openBusy = async (localAddress: string) => {
      const busy = await openIdle(gw.url, localAddress);
      busy.socket.write('POST /portal/api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
      opened.push(busy);
      return busy;
    };

    test('when every place is held by a request in progress, then a new client still gets in, in place of the oldest connection of the client holding the most', async () => {
      const heavy: IdleSocket[] = [];
      for (let i = 0; i < 4; i++) heavy.push(await openBusy('127.0.0.3'));
      const light = [await openBusy('127.0.0.4'), await openBusy('127.0.0.4')];
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect([...heavy, ...light].filter((s) => s.closed)).toHaveLength(0);

      expect(await healthFrom(gw.url, '127.0.0.2')).toBe(200);
      await until('the heavy client\'s oldest connection to be closed', () => heavy[0]!.closed, 3000);
      expect(heavy.filter((s) => s.closed)).toHaveLength(1);
      expect(light.filter((s) => s.closed)).toHaveLength(0);
    });
  });

  describe('with a 1 s socket timeout', () => {
    let gw: TestGateway;
    beforeAll(async () => {
      // The socket timeout never cuts a request waiting for its upstream, so the upstream's is lowered too.
      gw = await startTestGateway({ env: { SOCKET_TIMEOUT_MS: '1000', UPSTREAM_TIMEOUT_MS: '500' } });
    });
    afterAll(() => gw?.stop());

    test('when a client stops reading its responses, then the gateway closes the connection once nothing has moved for SOCKET_TIMEOUT_MS', async () => {
      const reader = await openIdle(gw.url, '127.0.0.1');
      reader.socket.pause();
      // Far more than the socket buffers hold, pipelined: the gateway's writes stall. A file of
      // 1.7 MB fills them within a few answers, even on a machine too busy to answer fast.
      const requests = 200;
      reader.socket.write('GET /docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(requests));
      // Long enough for loopback TCP to stop moving and then the timeout to run, on a busy machine too.
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      // A paused socket does not see the close: read what was sent before it.
      let received = '';
      reader.socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      reader.socket.resume();
      try {
        await until('the stalled connection to be closed', () => reader.closed, 5000);
      } finally {
        reader.socket.destroy();
      }
      const answered = received.split('HTTP/1.1 200 OK').length - 1;
      expect(answered).toBeGreaterThan(0);
      expect(answered).toBeLessThan(requests);
    });
  });

  describe('with 1 s timeouts', () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway({ env: { HEADERS_TIMEOUT_MS: '1000', KEEP_ALIVE_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '1000' } });
    });
    afterAll(() => gw?.stop());

    test('when a keep-alive connection stays idle after its response, then the gateway closes it once KEEP_ALIVE_TIMEOUT_MS has passed', async () => {
      const started = Date.now();
      const answer = await sendRaw(gw.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', 4000);
      expect(answer.status).toBe(200);
      expect(answer.headers['keep-alive']).toBe('timeout=1');
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    });

    test('when a connection never sends a request, then the gateway answers 408 and closes it once HEADERS_TIMEOUT_MS has passed', async () => {
      const answer = await sendRaw(gw.url, '', 4000);
      expect(answer.status).toBe(408);
      expect(JSON.parse(answer.body)).toEqual({ code: 'request_timeout', message: 'The request did not arrive in time.', status: 408 });
    });

    test('when a request body arrives no further, then the gateway answers 408 and closes the connection once REQUEST_TIMEOUT_MS has passed', async () => {
      const head = 'POST /portal/api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{';
      const answer = await sendRaw(gw.url, head, 4000);
      expect(answer.status).toBe(408);
      expect(JSON.parse(answer.body)).toEqual({ code: 'request_timeout', message: 'The request did not arrive in time.', status: 408 });
    });
  });
});
