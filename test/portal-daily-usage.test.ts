import { rmSync } from 'node:fs';
import { expectMatchesPortalContract } from './support/contract';
import { createTestDatabase, tempDir, type TestDatabase } from './support/databases';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { spawnGateway } from './support/gateway-process';
import { jsonOf } from './support/http';
import { startRecordingUpstream } from './support/upstream-double';
import { until } from './support/until';

const DAY_MS = 24 * 60 * 60 * 1000;
const NONE = { ok: 0, clientErrors: 0, rateLimited: 0, serverErrors: 0 };
const today = () => new Date().toISOString().slice(0, 10);

interface UsageDay {
  day: string;
  ok: number;
  clientErrors: number;
  rateLimited: number;
  serverErrors: number;
}

/** GET a usage path of the portal API as `dev`; asserts 200, no-store and the portal.yaml schema. */
async function usageOf(gw: { url: string }, dev: Developer, path: string): Promise<UsageDay[]> {
  const res = await fetch(`${gw.url}/portal/api${path}`, { headers: { cookie: dev.cookie } });
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-store');
  const body = await jsonOf(res);
  expectMatchesPortalContract(path.startsWith('/keys/') ? 'getApiKeyUsage' : 'getAccountUsage', 200, body);
  return (body as { days: UsageDay[] }).days;
}

const call = (gw: { url: string }, path: string, key: string) => fetch(gw.url + path, { headers: { authorization: `Bearer ${key}` } }).then((res) => res.status);

/**
 * The portal's usage API through the real gateway: every response a key authenticated is counted
 * on its UTC day by outcome, at once for the serving process, and for good after a restart.
 */
describe('daily usage on the portal API', () => {
  const dataDir = tempDir('asg-daily-');
  let gw: TestGateway;
  let refusing: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let dev: Developer;
  let stagingKeyId: string;
  let productionKeyId: string;
  const env = () => ({ DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '5', STAGING_UPSTREAM: refusing.url, CIRCUIT_FAILURE_THRESHOLD: '100' });

  beforeAll(async () => {
    // Staging's upstream drops every connection: its calls are the 5xx.
    refusing = await startRecordingUpstream((_req, res) => res.socket?.destroy());
    gw = await startTestGateway({ env: env() });
    dev = await signUpDeveloper(gw.url);
    const keys: Array<{ id: string; environment: string }> = await jsonOf(await fetch(`${gw.url}/portal/api/keys`, { headers: { cookie: dev.cookie } }));
    productionKeyId = keys.find((k) => k.environment === 'production')!.id;
    stagingKeyId = keys.find((k) => k.environment === 'staging')!.id;
  });
  afterAll(async () => {
    await gw?.stop();
    await refusing?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('when a key gets 200, 400, 404 and 429 answers and another 5xx, then each is counted in its class for today, per key and for the account', async () => {
    const statuses = [];
    for (const path of ['/v1/pets', '/v1/pets?limit=abc', '/v1/no-such-thing', '/v1/pets', '/v1/pets', '/v1/pets', '/v1/pets']) {
      statuses.push(await call(gw, path, dev.productionKey));
    }
    expect(statuses).toEqual([200, 400, 404, 200, 200, 429, 429]);
    expect([await call(gw, '/staging/v1/pets', dev.stagingKey), await call(gw, '/staging/v1/pets/1', dev.stagingKey)]).toEqual([502, 502]);
    // Refused before a key was known: nobody's request.
    expect(await call(gw, '/v1/pets', 'asg_prod_not-a-real-key')).toBe(401);

    expect(await usageOf(gw, dev, `/keys/${productionKeyId}/usage?days=1`)).toEqual([{ day: today(), ok: 3, clientErrors: 2, rateLimited: 2, serverErrors: 0 }]);
    expect(await usageOf(gw, dev, `/keys/${stagingKeyId}/usage?days=1`)).toEqual([{ day: today(), ...NONE, serverErrors: 2 }]);
    expect(await usageOf(gw, dev, '/usage?days=1')).toEqual([{ day: today(), ok: 3, clientErrors: 2, rateLimited: 2, serverErrors: 2 }]);
  });

  test('when days is absent or 90, then there is one entry per UTC day up to today, oldest first, zeros filled', async () => {
    const month = await usageOf(gw, dev, `/keys/${productionKeyId}/usage`);
    expect(month).toHaveLength(30);
    expect(month[0]).toEqual({ day: new Date(Date.now() - 29 * DAY_MS).toISOString().slice(0, 10), ...NONE });
    expect(month[29]!.day).toBe(today());
    expect(month.slice(0, 29).every((d) => d.ok + d.clientErrors + d.rateLimited + d.serverErrors === 0)).toBe(true);
    const quarter = await usageOf(gw, dev, '/usage?days=90');
    expect(quarter).toHaveLength(90);
    expect(new Set(quarter.map((d) => d.day)).size).toBe(90);
    expect(quarter.map((d) => d.day)).toEqual([...quarter.map((d) => d.day)].sort());
  });

  test('when a request is answered just before and just after midnight UTC, then each is counted on its own day', async () => {
    const { id, key } = await dev.issueKey({ name: 'midnight', environment: 'staging' });
    const midnight = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    gw.clock.set(new Date(midnight - 1));
    expect(await call(gw, '/staging/v1/pets', key)).toBe(502);
    gw.clock.set(new Date(midnight));
    expect(await call(gw, '/staging/v1/no-such-thing', key)).toBe(404);
    gw.clock.reset();
    expect(await usageOf(gw, dev, `/keys/${id}/usage?days=2`)).toEqual([
      { day: new Date(midnight - 1).toISOString().slice(0, 10), ...NONE, serverErrors: 1 },
      { day: today(), ...NONE, clientErrors: 1 },
    ]);
  });

  test("when another account asks for a key's usage, then 404 as for an unknown key, and signed out is 401", async () => {
    const stranger = await signUpDeveloper(gw.url);
    const notFound = { code: 'not_found', message: 'No API key with this id exists in your account.', status: 404 };
    for (const id of [productionKeyId, 'key_AAAAAAAAAAAAAAAA', 'key_%00', 'not-a-key']) {
      const res = await fetch(`${gw.url}/portal/api/keys/${id}/usage`, { headers: { cookie: stranger.cookie } });
      expect(res.status).toBe(404);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await jsonOf(res)).toEqual(notFound);
    }
    // The stranger's own account has no requests.
    expect((await usageOf(gw, stranger, '/usage?days=1'))[0]).toEqual({ day: today(), ...NONE });
    for (const path of ['/usage', `/keys/${productionKeyId}/usage`]) {
      const res = await fetch(`${gw.url}/portal/api${path}`);
      expect(res.status).toBe(401);
      expect(await jsonOf(res)).toEqual({ code: 'unauthorized', message: 'You are not signed in, or your session has ended.', status: 401 });
    }
  });

  test.each([['days=0'], ['days=91'], ['days=abc'], ['days=1.5'], ['days='], ['days=7&days=8'], ['days[]=7']])('when the query is %s, then 400 invalid_request naming days', async (query) => {
    for (const path of ['/usage', `/keys/${productionKeyId}/usage`]) {
      const res = await fetch(`${gw.url}/portal/api${path}?${query}`, { headers: { cookie: dev.cookie } });
      expect(res.status).toBe(400);
      expect(await jsonOf(res)).toEqual(
        query.startsWith('days[]')
          ? { code: 'invalid_request', message: 'Unknown query parameter "days[]"; allowed: days.', status: 400 }
          : { code: 'invalid_request', message: 'days must be a whole number from 1 to 90.', status: 400 },
      );
    }
  });

  test('when a parameter other than days is sent, then 400 naming it; when a method other than GET, then 405 with Allow', async () => {
    const stray = await fetch(`${gw.url}/portal/api/usage?from=2026-01-01`, { headers: { cookie: dev.cookie } });
    expect(stray.status).toBe(400);
    expect(await jsonOf(stray)).toEqual({ code: 'invalid_request', message: 'Unknown query parameter "from"; allowed: days.', status: 400 });
    const post = await fetch(`${gw.url}/portal/api/keys/${productionKeyId}/usage`, { method: 'POST', headers: { cookie: dev.cookie, origin: gw.url } });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await jsonOf(post)).toEqual({ code: 'method_not_allowed', message: 'POST is not allowed here; allowed: GET, HEAD.', status: 405 });
  });

  test('when the gateway restarts on the same data, then the counts are still there', async () => {
    const before = await usageOf(gw, dev, '/usage?days=2');
    await gw.stop(); // long before the 5 s flush: the stop writes what is pending
    gw = await startTestGateway({ env: env() });
    expect(await usageOf(gw, dev, '/usage?days=2')).toEqual(before);
    expect((await usageOf(gw, dev, `/keys/${productionKeyId}/usage?days=1`))[0]).toEqual({ day: today(), ok: 3, clientErrors: 2, rateLimited: 2, serverErrors: 0 });
  });
});

/** Two gateways sharing one PostgreSQL, as behind a load balancer: each adds its counts to the same days. */
describe('daily usage across two gateways sharing PostgreSQL', () => {
  let db: TestDatabase;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const env = { DATABASE_URL: db.settings.databaseUrl! };
    a = await startTestGateway({ env });
    b = await startTestGateway({ env });
  }, 60_000);
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await db?.destroy();
  });

  test('when a key is used through both, then either shows the sum once the other has flushed', async () => {
    const dev = await signUpDeveloper(a.url);
    const { id, key } = await dev.issueKey({ name: 'both' });
    expect(await call(a, '/v1/pets', key)).toBe(200);
    expect(await call(a, '/v1/nothing-here', key)).toBe(404);
    expect(await call(b, '/v1/pets', key)).toBe(200);
    expect(await call(b, '/v1/pets?limit=0', key)).toBe(400);
    expect(await call(b, '/v1/pets', key)).toBe(200);
    const sum = [{ day: today(), ...NONE, ok: 3, clientErrors: 2 }];
    // Each sees its own requests at once; the other's within one flush interval (5 s).
    expect((await usageOf(a, dev, `/keys/${id}/usage?days=1`))[0]!.ok).toBeGreaterThanOrEqual(1);
    for (const gw of [a, b]) {
      let seen: UsageDay[] = [];
      await until(`the sum through ${gw.url}`, async () => JSON.stringify((seen = await usageOf(gw, dev, `/keys/${id}/usage?days=1`))) === JSON.stringify(sum), 15_000).catch(
        (err: Error) => {
          throw new Error(`${err.message}; last seen ${JSON.stringify(seen)}`);
        },
      );
      expect(await usageOf(gw, dev, '/usage?days=1')).toEqual([{ day: today(), ...NONE, ok: 3, clientErrors: 2 }]);
    }
  }, 40_000);
});

/** `npm start` as a real process, on its own clock (a midnight timer keeps the day): SIGTERM writes what is pending. */
describe('daily usage of the real process across a restart', () => {
  const dataDir = tempDir('asg-daily-process-');
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  test('when the process is stopped with SIGTERM before its flush, then a new process on the same DATA_DIR shows the counts', async () => {
    const first = await spawnGateway({ DATA_DIR: dataDir });
    let second: Awaited<ReturnType<typeof spawnGateway>> | undefined;
    try {
      const dev = await signUpDeveloper(first.url);
      const { id, key } = await dev.issueKey({ name: 'process' });
      expect([await call(first, '/v1/pets', key), await call(first, '/v1/pets?limit=abc', key), await call(first, '/v1/pets', key)]).toEqual([200, 400, 200]);
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      second = await spawnGateway({ DATA_DIR: dataDir });
      expect(await usageOf(second, dev, `/keys/${id}/usage?days=1`)).toEqual([{ day: today(), ...NONE, ok: 2, clientErrors: 1 }]);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      for (const p of [first, second]) if (p && p.child.exitCode === null) p.child.kill('SIGKILL');
    }
  }, 90_000);
});
