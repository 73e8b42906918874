import { Agent, request } from 'node:http';
import { captureLogs } from './support/captured-logs';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { startPrivatePostgres, type PrivatePostgres } from './support/postgres-server';

interface Outcome {
  kind: 'create' | 'list' | 'get';
  startedAt: number;
  endedAt: number;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const UPSTREAM_TIMEOUT_MS = 10_000;
/** "No hang": a refusal comes well before the store's 5 s query timeout and the gateway's 10 s upstream timeout. */
const FAST_FAILURE_MS = 4_000;
const DOWN_FOR_MS = 3_000;
const STORE_REFUSAL = { code: 'service_unavailable', message: 'The data store is temporarily unavailable; retry shortly.', status: 503 };

/**
 * The two refusals a client may see: the store's own (passed through by the proxy), or the
 * gateway's circuit breaker sparing the store after a run of them. Both are 503 with Retry-After.
 */
function expectServiceUnavailable(o: Outcome): 'store' | 'breaker' {
  const retryAfter = String(o.headers['retry-after']);
  const body = JSON.parse(o.body);
  expect(o.headers['content-type']).toMatch(/^application\/json/);
  if (body.message === STORE_REFUSAL.message) {
    expect(body).toEqual(STORE_REFUSAL);
    expect(retryAfter).toBe('1');
    return 'store';
  }
  expect(body).toEqual({ code: 'service_unavailable', message: `The upstream is unavailable; retry after ${retryAfter} s.`, status: 503 });
  expect(retryAfter).toMatch(/^[1-9]\d*$/);
  return 'breaker';
}

interface Scenario {
  outcomes: Outcome[];
  downSince: number;
  downUntil: number;
  restartedAt: number;
  readyWhileDown: { status: number; retryAfter: string | null; body: unknown };
  readyAfter: { status: number; retryAfter: string | null; body: unknown };
  send: (kind: Outcome['kind'], method: string, path: string, body?: unknown) => Promise<Outcome>;
  logs: Array<{ level: number; msg?: string }>;
}

/**
 * PostgreSQL (DATABASE_URL) crashes under traffic and comes back: known keys keep working from
 * the key cache, creates are refused quickly and clearly while it is down, and every create the
 * gateway acknowledged is still there afterwards.
 */
describe('when PostgreSQL crashes under traffic and restarts', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  async function crashUnderTraffic(env: Record<string, string>): Promise<Scenario> {
    const pg: PrivatePostgres = await startPrivatePostgres();
    cleanups.push(() => pg.destroy());
    const { lines: logs, logger } = captureLogs<Scenario['logs'][number]>('warn');
    const gw: TestGateway = await startTestGateway({
      env: { DATABASE_URL: pg.url, RATE_LIMIT_PER_MINUTE: '1000000', UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS), ...env },
      logger,
    });
    cleanups.push(() => gw.stop());
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    cleanups.push(() => agent.destroy());
    const dev = await signUpDeveloper(gw.url);

    const send: Scenario['send'] = (kind, method, path, body) =>
      new Promise<Outcome>((resolve, reject) => {
        const startedAt = Date.now();
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const headers = { authorization: `Bearer ${dev.productionKey}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) };
        const req = request(`${gw.url}${path}`, { method, agent, headers }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ kind, startedAt, endedAt: Date.now(), status: res.statusCode!, headers: res.headers, body: text }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(payload);
      });
    let serial = 0;
    const create = () => send('create', 'POST', '/v1/pets', { name: `Crash test ${serial++}`, categoryId: 1 });
    const list = () => send('list', 'GET', '/v1/pets?limit=5');
    const readyz = async () => {
      const res = await fetch(`${gw.url}/readyz`);
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
    };

    // Warm the key cache: from here on the key is known.
    const warm = [await create(), await list()];
    expect(warm.map((o) => o.status)).toEqual([201, 200]);

    const outcomes: Outcome[] = [...warm];
    let running = true;
    const worker = async () => {
      while (running) {
        outcomes.push(await create());
        outcomes.push(await list());
        await new Promise((r) => setTimeout(r, 10)); // bounded load: the machine is shared
      }
    };
    const workers = [worker(), worker(), worker()];

    await new Promise((r) => setTimeout(r, 1000));
    await pg.crash();
    const downSince = Date.now();
    await new Promise((r) => setTimeout(r, 300));
    const readyWhileDown = await readyz();
    await new Promise((r) => setTimeout(r, DOWN_FOR_MS - 300));
    const downUntil = Date.now();
    await pg.restart();
    const restartedAt = Date.now();

    // Keep going until a create that started after the restart is acknowledged (bounded), then a little more.
    const deadline = Date.now() + 15_000;
    while (!outcomes.some((o) => o.kind === 'create' && o.status === 201 && o.startedAt >= restartedAt) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 500));
    running = false;
    await Promise.all(workers);
    return { outcomes, downSince, downUntil, restartedAt, readyWhileDown, readyAfter: await readyz(), send, logs };
  }

  /** What every configuration must guarantee; returns the figures for the report. */
  async function expectSafeOutage(s: Scenario) {
    const { outcomes } = s;
    const during = outcomes.filter((o) => o.startedAt >= s.downSince && o.endedAt <= s.downUntil);
    const createsDuring = during.filter((o) => o.kind === 'create');
    const refusals = outcomes.filter((o) => o.status >= 500);
    const recovered = outcomes.find((o) => o.kind === 'create' && o.status === 201 && o.startedAt >= s.restartedAt);
    const acknowledged = outcomes.filter((o) => o.kind === 'create' && o.status === 201).map((o) => JSON.parse(o.body) as { id: number; name: string });

    // The known key verified from the cache throughout: no 401, and no 5xx but 503.
    expect(outcomes.filter((o) => o.status === 401)).toEqual([]);
    expect([...new Set(outcomes.map((o) => o.status))].filter((status) => ![200, 201, 503].includes(status))).toEqual([]);
    const sources = refusals.map(expectServiceUnavailable);
    for (const o of refusals) expect(o.endedAt - o.startedAt).toBeLessThan(FAST_FAILURE_MS);

    // While it was down every create was refused; lists are 200 from the list cache or refused.
    expect(createsDuring.length).toBeGreaterThanOrEqual(3);
    expect(createsDuring.map((o) => o.status)).toEqual(createsDuring.map(() => 503));
    expect(during.filter((o) => o.kind === 'list' && o.status !== 200 && o.status !== 503)).toEqual([]);

    expect(s.readyWhileDown).toEqual({ status: 503, retryAfter: '1', body: { code: 'service_unavailable', message: 'Not ready: database unavailable.', status: 503 } });
    expect(s.readyAfter).toEqual({ status: 200, retryAfter: null, body: { status: 'ready', checks: { database: 'ok' } } });

    // Creates succeed again soon after the server is back.
    expect(recovered).toBeDefined();
    expect(recovered!.endedAt - s.restartedAt).toBeLessThan(10_000);

    // Nothing acknowledged with 201 was lost, although the crash came with no warning.
    expect(acknowledged.length).toBeGreaterThan(3);
    for (const pet of acknowledged) {
      const res = await s.send('get', 'GET', `/v1/pets/${pet.id}`);
      expect({ id: pet.id, status: res.status }).toEqual({ id: pet.id, status: 200 });
      expect(JSON.parse(res.body)).toMatchObject({ id: pet.id, name: pet.name });
    }
    expect(s.logs.filter((l) => l.level >= 60)).toEqual([]);

    const figures = {
      requests: outcomes.length,
      acknowledgedCreates: acknowledged.length,
      createsWhileDown: createsDuring.length,
      refusedByStore: sources.filter((x) => x === 'store').length,
      refusedByBreaker: sources.filter((x) => x === 'breaker').length,
      slowestRefusalMs: Math.max(...refusals.map((o) => o.endedAt - o.startedAt)),
      restartMs: s.restartedAt - s.downUntil,
      firstCreateAfterRestartMs: recovered!.endedAt - s.restartedAt,
    };
    process.stdout.write(`postgres-restart figures: ${JSON.stringify(figures)}\n`);
    return figures;
  }

  test('with the circuit breaker out of the way, then every create reaches the store and gets its 503 at once; afterwards creates succeed and no acknowledged pet is lost', async () => {
    const figures = await expectSafeOutage(await crashUnderTraffic({ CIRCUIT_FAILURE_THRESHOLD: '10000' }));
    expect(figures.refusedByBreaker).toBe(0);
  }, 120_000);

  test('with the default circuit breaker, then creates are refused 503 (by the store, then by the open circuit) and succeed again once it closes', async () => {
    const figures = await expectSafeOutage(await crashUnderTraffic({}));
    expect(figures.refusedByStore).toBeGreaterThan(0);
  }, 120_000);
});
