import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import Redis from 'ioredis';
import { redisTestUrl, tempDir } from './support/databases';
import { signUpDeveloper } from './support/gateway-harness';
import { spawnGateway, type GatewayProcess } from './support/gateway-process';
import { until } from './support/until';
import { startRecordingUpstream } from './support/upstream-double';

const PET = { id: 1, name: 'Slowpoke', categoryId: 1, status: 'available' };
const SLOW_MS = 2000;

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function get(url: string, agent: Agent, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Resolves with the error code of a fresh TCP connection attempt ('connected' if it was accepted). */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

const logLines = (p: GatewayProcess): Array<Record<string, unknown> & { msg?: string; level: number }> =>
  p
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));

/** SIGTERM to a real `npm start` process: drain in-flight requests (bounded), close Redis and the store, exit 0. */
describe('graceful shutdown on SIGTERM', () => {
  let upstream: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let redis: Redis;
  const children: GatewayProcess[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    // /pets/1 answers after SLOW_MS; anything else only after a minute (a request that outlives any grace).
    upstream = await startRecordingUpstream((req, res) => {
      const timer = setTimeout(
        () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(PET));
        },
        req.url === '/pets/1' ? SLOW_MS : 60_000,
      );
      res.once('close', () => clearTimeout(timer));
    });
    redis = new Redis(redisTestUrl());
  });
  afterAll(async () => {
    for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await upstream?.close();
    redis?.disconnect();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const start = async (env: Record<string, string>) => {
    const child = await spawnGateway({ LOG_LEVEL: 'info', PRODUCTION_UPSTREAM: upstream.url, ...env }, 60_000);
    children.push(child);
    return child;
  };
  const namedConnections = async (name: string) =>
    String(await redis.client('LIST'))
      .split('\n')
      .filter((line) => line.includes(` name=${name} `)).length;

  test('when SIGTERM arrives during a slow request, then new connections are refused, the request completes 200 with Connection: close, Redis and the DATA_DIR are released, and the exit code is 0', async () => {
    const dataDir = tempDir('asg-shutdown-');
    dirs.push(dataDir);
    const env = { DATA_DIR: dataDir, REDIS_URL: redisTestUrl(), REDIS_KEY_PREFIX: `asg-shutdown-${randomBytes(4).toString('hex')}:`, SHUTDOWN_TIMEOUT_MS: '8000' };
    const gw = await start(env);
    const port = Number(new URL(gw.url).port);
    const connectionName = `asg-gateway-${gw.child.pid}`;
    expect(await namedConnections(connectionName)).toBe(2);
    const dev = await signUpDeveloper(gw.url);
    const auth = { authorization: `Bearer ${dev.productionKey}` };

    // One idle keep-alive connection, one busy with a request the upstream answers only after SLOW_MS.
    const idleAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    const busyAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await get(`${gw.url}/healthz`, idleAgent)).status).toBe(200);
    const idleSocket = Object.values(idleAgent.freeSockets)[0]![0]! as Socket;
    const idleClosed = new Promise<void>((resolve) => idleSocket.once('close', () => resolve()));
    const before = upstream.requests.length;
    let settled = false;
    const inFlight = get(`${gw.url}/v1/pets/1`, busyAgent, auth).finally(() => (settled = true));
    await until('the slow request to reach the upstream', () => upstream.requests.length > before);

    const sigtermAt = Date.now();
    gw.child.kill('SIGTERM');
    await until('the listener to close', async () => (await tryConnect(port)) === 'ECONNREFUSED', 5000);
    const refusedAfterMs = Date.now() - sigtermAt;
    expect(settled).toBe(false); // refused while the slow request was still in flight
    await idleClosed; // the idle keep-alive connection is closed by the server, not left to time out
    gw.child.kill('SIGTERM'); // a second signal does not cut the drain short

    const reply = await inFlight;
    const answeredAfterMs = Date.now() - sigtermAt;
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual(PET);
    expect(reply.headers.connection).toBe('close');

    expect(await gw.exited).toBe(0);
    const exitedAfterMs = Date.now() - sigtermAt;
    expect(exitedAfterMs).toBeLessThan(8000);
    const lines = logLines(gw);
    expect(lines.filter((l) => l.msg === 'SIGTERM received; shutting down')).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'SIGTERM received; already shutting down, still waiting for in-flight requests')).toHaveLength(1);
    expect(lines.find((l) => l.msg === 'gateway stopped')).toMatchObject({ inFlight: 1, cut: 0, closeFailures: 0 });
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);

    // Its Redis connections are gone, and the embedded database's lock was released, not left stale.
    await until('the Redis connections to disappear', async () => (await namedConnections(connectionName)) === 0, 3000);
    expect(existsSync(join(dataDir, 'pglite.lock'))).toBe(false);
    const next = await start(env);
    expect((await fetch(`${next.url}/readyz`)).status).toBe(200);
    const again = await get(`${next.url}/v1/pets/1`, new Agent(), auth); // the key survived the stop
    expect(again.status).toBe(200);
    next.child.kill('SIGTERM');
    expect(await next.exited).toBe(0);
    idleAgent.destroy();
    busyAgent.destroy();
    process.stdout.write(`graceful-shutdown figures: ${JSON.stringify({ refusedAfterMs, answeredAfterMs, exitedAfterMs })}\n`);
  }, 180_000);

  test('when a request outlives SHUTDOWN_TIMEOUT_MS, then its connection is cut at the deadline and the process still exits 0', async () => {
    const dataDir = tempDir('asg-shutdown-');
    dirs.push(dataDir);
    const gw = await start({ DATA_DIR: dataDir, SHUTDOWN_TIMEOUT_MS: '1000', UPSTREAM_TIMEOUT_MS: '120000' });
    const dev = await signUpDeveloper(gw.url);
    const before = upstream.requests.length;
    const outcome = get(`${gw.url}/v1/pets/2`, new Agent(), { authorization: `Bearer ${dev.productionKey}` }).then(
      (reply) => `answered ${reply.status}`,
      (err: NodeJS.ErrnoException) => `cut: ${err.code ?? err.message}`,
    );
    await until('the request to reach the upstream', () => upstream.requests.length > before);

    const sigtermAt = Date.now();
    gw.child.kill('SIGTERM');
    expect(await outcome).toMatch(/^cut: (ECONNRESET|socket hang up)/);
    const cutAfterMs = Date.now() - sigtermAt;
    expect(cutAfterMs).toBeGreaterThanOrEqual(900);
    expect(await gw.exited).toBe(0);
    const exitedAfterMs = Date.now() - sigtermAt;
    expect(exitedAfterMs).toBeLessThan(8000);
    const lines = logLines(gw);
    expect(lines.find((l) => l.msg === 'requests outlived SHUTDOWN_TIMEOUT_MS; their connections were cut')).toMatchObject({ cut: 1, shutdownTimeoutMs: 1000 });
    expect(lines.find((l) => l.msg === 'gateway stopped')).toMatchObject({ inFlight: 1, cut: 1, closeFailures: 0 });
    expect(existsSync(join(dataDir, 'pglite.lock'))).toBe(false);
    process.stdout.write(`graceful-shutdown figures: ${JSON.stringify({ cutAfterMs, exitedAfterMs })}\n`);
  }, 120_000);
});
