import { request, type IncomingHttpHeaders } from 'node:http';
import { rmSync } from 'node:fs';
import { tempDir } from './support/databases';
import { signUpDeveloper, type Developer } from './support/gateway-harness';
import { spawnGateway, type GatewayProcess } from './support/gateway-process';
import { startRecordingUpstream } from './support/upstream-double';

const PET = { id: 7, name: 'Slowpoke', categoryId: 1, status: 'available' };
const SLOW_MS = 500;
const TIMEOUT_MS = 1500;
const MAX_SOCKETS = 16;
const MAX_QUEUE = 32;
/** Loopback source addresses the calls are spread over, so no per-address connection cap decides the outcome. */
const SOURCES = Array.from({ length: 20 }, (_, i) => `127.0.0.${i + 2}`);

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One call on its own connection; a connection error is status 0 with its message as the body. */
function call(url: string, headers: Record<string, string>, localAddress: string, oneByteOfTwo = false): Promise<Reply> {
  return new Promise((resolve) => {
    const req = request(url, { headers: oneByteOfTwo ? { ...headers, 'content-length': '2' } : headers, localAddress, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode!, headers: res.headers, body });
        req.destroy();
      });
      res.on('error', (err) => resolve({ status: 0, headers: {}, body: err.message }));
    });
    req.on('error', (err) => resolve({ status: 0, headers: {}, body: err.message }));
    if (oneByteOfTwo) req.write('x');
    else req.end();
  });
}

/**
 * More concurrent calls than the gateway holds connections to its upstream, against a real
 * gateway process: every client gets an answer (the pet, or an Error body saying busy or too
 * slow), the process survives, and the upstream never sees more connections than allowed.
 */
describe('more concurrent calls than upstream connections', () => {
  let active = 0;
  let mostActive = 0;
  let upstream: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let gateway: GatewayProcess;
  let dev: Developer;
  const dataDir = tempDir('asg-saturation-');

  beforeAll(async () => {
    upstream = await startRecordingUpstream((_req, res) => {
      mostActive = Math.max(mostActive, ++active);
      // Counted while its connection is open: a call the gateway timed out ends with its socket, not with this timer.
      res.once('close', () => active--);
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(PET));
      }, SLOW_MS);
    });
    gateway = await spawnGateway(
      {
        DATA_DIR: dataDir,
        PRODUCTION_UPSTREAM: upstream.url,
        UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
        UPSTREAM_MAX_SOCKETS: String(MAX_SOCKETS),
        UPSTREAM_MAX_QUEUE: String(MAX_QUEUE),
        RATE_LIMIT_PER_MINUTE: '100000',
      },
      60_000,
    );
    dev = await signUpDeveloper(gateway.url);
  }, 90_000);
  afterAll(async () => {
    if (gateway?.child.exitCode === null) {
      gateway.child.kill('SIGTERM');
      await gateway.exited;
    }
    await upstream?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('when 300 clients call a slow remote upstream at once, then each gets the pet, 503 or 504 with an Error body, the upstream sees at most UPSTREAM_MAX_SOCKETS connections and never a key, and the gateway still answers', async () => {
    const auth = { authorization: `Bearer ${dev.productionKey}` };
    const replies = await Promise.all(Array.from({ length: 300 }, (_, i) => call(`${gateway.url}/v1/pets/7`, auth, SOURCES[i % SOURCES.length]!)));

    const statuses = new Set(replies.map((r) => r.status));
    expect([...statuses].filter((s) => ![200, 503, 504].includes(s))).toEqual([]);
    expect(statuses.has(200)).toBe(true);
    expect(statuses.has(503)).toBe(true); // more than the sockets plus the queue
    for (const reply of replies) {
      if (reply.status === 200) expect(JSON.parse(reply.body)).toEqual(PET);
      if (reply.status === 504) expect(JSON.parse(reply.body)).toEqual({ code: 'gateway_timeout', message: `The upstream did not answer within ${TIMEOUT_MS} ms.`, status: 504 });
      if (reply.status === 503) {
        expect(JSON.parse(reply.body)).toEqual({ code: 'service_unavailable', message: expect.stringMatching(/^The upstream is (busy|unavailable); retry after \d+ s\.$/), status: 503 });
        expect(reply.headers['retry-after']).toMatch(/^\d+$/);
      }
    }
    expect(mostActive).toBeLessThanOrEqual(MAX_SOCKETS);
    for (const seen of upstream.requests) {
      expect(JSON.stringify(seen.headers)).not.toContain(dev.productionKey);
      expect(seen.headers.authorization).toBeUndefined();
    }

    expect(gateway.child.exitCode).toBeNull();
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
    const after = await call(`${gateway.url}/v1/pets/7`, auth, '127.0.0.1');
    expect([200, 503]).toContain(after.status); // 503 while the circuit the timeouts opened is still open
  }, 30_000);

  test('when 260 GETs to the embedded store declare a body and send one byte of it, then each is refused 400 before the upstream, and the gateway still answers', async () => {
    const auth = { authorization: `Bearer ${dev.stagingKey}` };
    const replies = await Promise.all(Array.from({ length: 260 }, (_, i) => call(`${gateway.url}/staging/v1/pets/1`, auth, SOURCES[i % SOURCES.length]!, true)));

    for (const reply of replies) {
      expect(reply.status).toBe(400);
      expect(JSON.parse(reply.body)).toEqual({ code: 'invalid_request', message: 'GET /staging/v1/pets/{petId} takes no request body.', status: 400 });
    }
    expect(gateway.child.exitCode).toBeNull();
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
    const plain = await call(`${gateway.url}/staging/v1/pets?limit=1`, auth, '127.0.0.1');
    expect(plain.status).toBe(200);
  }, 30_000);
});
