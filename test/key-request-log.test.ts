import Redis from 'ioredis';
import { expectMatchesPortalContract } from './support/contract';
import { deleteRedisKeys, redisTestPrefix, redisTestUrl } from './support/databases';
import { signUpDeveloper, startGatewayPair, startTestGateway, type Developer, type GatewayPair, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { until } from './support/until';

const DAY = 24 * 60 * 60 * 1000;
const REQUEST_ID_FORMAT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Logged {
  id: string;
  time: string;
  method: string;
  path: string;
  status: number;
  code: string | null;
  latencyMs: number;
  cache: 'HIT' | 'MISS' | null;
  requestId: string;
}

/** A developer with one key of its own, calling the gateway and reading that key's log through the portal API. */
async function developerWithKey(gwUrl: string, portalUrl = gwUrl) {
  const dev: Developer = await signUpDeveloper(portalUrl);
  const { id, key } = await dev.issueKey({ name: 'logged key' });
  const call = async (path: string, init: { method?: string; body?: unknown; requestId?: string; url?: string } = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (init.requestId) headers['x-request-id'] = init.requestId;
    const res = await fetch((init.url ?? gwUrl) + path, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
    await res.arrayBuffer();
    return { status: res.status, requestId: res.headers.get('x-request-id')!, cache: res.headers.get('x-cache') };
  };
  const read = (query = '', cookie = dev.cookie, keyId = id) => fetch(`${portalUrl}/portal/api/keys/${keyId}/requests${query}`, { headers: { cookie } });
  const log = async (query = ''): Promise<Logged[]> => {
    const res = await read(query);
    expect(res.status).toBe(200);
    const body: unknown = await jsonOf(res);
    expectMatchesPortalContract('listKeyRequests', 200, body);
    return body as Logged[];
  };
  return { dev, id, key, call, read, log };
}

describe.each(['memory', 'redis'] as const)("a key's request log (%s)", (backend) => {
  const prefix = redisTestPrefix();
  let gw: TestGateway;
  let redis: Redis | undefined;

  beforeAll(async () => {
    const env: Record<string, string> = { RATE_LIMIT_PER_MINUTE: '5', CACHE_TTL_SECONDS: '60' };
    if (backend === 'redis') {
      Object.assign(env, { REDIS_URL: redisTestUrl(), REDIS_KEY_PREFIX: prefix });
      redis = new Redis(redisTestUrl());
    }
    gw = await startTestGateway({ env });
  });
  afterEach(() => gw.clock.reset());
  afterAll(async () => {
    await gw?.stop();
    if (redis) {
      await deleteRedisKeys(prefix, redis);
      redis.disconnect();
    }
  });

  /** 200 (a miss, then a hit), a 400 the gateway refuses, a 404 from the pet store, a 201, then 429: the key's five calls a minute and one more. */
  async function knownOutcomes(k: Awaited<ReturnType<typeof developerWithKey>>) {
    const calls = [
      await k.call('/v1/pets?limit=2', { requestId: 'client-chosen.id:1' }),
      await k.call('/v1/pets?limit=2'),
      await k.call('/v1/pets?limit=abc'),
      await k.call('/v1/pets/999999'),
      await k.call('/v1/pets', { method: 'POST', body: { name: 'SecretBodyMarker', categoryId: 1 } }),
      await k.call('/v1/pets?limit=2'),
    ];
    expect(calls.map((c) => [c.status, c.cache])).toEqual([
      [200, 'MISS'],
      [200, 'HIT'],
      [400, null],
      [404, null],
      [201, null],
      [429, null],
    ]);
    return calls;
  }

  test('when calls with known outcomes are made, then the log lists them newest first with their exact fields', async () => {
    const k = await developerWithKey(gw.url);
    const before = Date.now();
    const calls = await knownOutcomes(k);
    const after = Date.now();
    const logged = await k.log();
    expect(logged.map(({ id: _id, time: _time, latencyMs: _latency, ...rest }) => rest)).toEqual([
      { method: 'GET', path: '/v1/pets?limit=2', status: 429, code: 'rate_limited', cache: null, requestId: calls[5]!.requestId },
      { method: 'POST', path: '/v1/pets', status: 201, code: null, cache: null, requestId: calls[4]!.requestId },
      { method: 'GET', path: '/v1/pets/999999', status: 404, code: 'not_found', cache: null, requestId: calls[3]!.requestId },
      { method: 'GET', path: '/v1/pets?limit=abc', status: 400, code: 'invalid_request', cache: null, requestId: calls[2]!.requestId },
      { method: 'GET', path: '/v1/pets?limit=2', status: 200, code: null, cache: 'HIT', requestId: calls[1]!.requestId },
      { method: 'GET', path: '/v1/pets?limit=2', status: 200, code: null, cache: 'MISS', requestId: 'client-chosen.id:1' },
    ]);
    expect(calls[2]!.requestId).toMatch(REQUEST_ID_FORMAT);
    const ids = logged.map((r) => r.id);
    expect([...ids].sort(byId).reverse()).toEqual(ids);
    expect(new Set(ids).size).toBe(6);
    const times = logged.map((r) => Date.parse(r.time));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    for (const time of times) {
      expect(time).toBeGreaterThanOrEqual(before);
      expect(time).toBeLessThanOrEqual(after);
    }
    for (const { latencyMs } of logged) expect(latencyMs).toBeLessThan(after - before + 1);
    // The miss went upstream; the hit was answered from memory.
    expect(logged[5]!.latencyMs).toBeGreaterThan(0);
  });

  test('when a status filter is given, then 2xx, 4xx (without 429), 429 and 5xx each list their own, and a bad one is a 400', async () => {
    const k = await developerWithKey(gw.url);
    await knownOutcomes(k);
    const statuses = async (status: string) => (await k.log(`?status=${status}`)).map((r) => r.status);
    expect(await statuses('2xx')).toEqual([201, 200, 200]);
    expect(await statuses('4xx')).toEqual([404, 400]);
    expect(await statuses('429')).toEqual([429]);
    expect(await statuses('5xx')).toEqual([]);
    const bad = await k.read('?status=3xx');
    expect(bad.status).toBe(400);
    expect(await jsonOf(bad)).toEqual({ code: 'invalid_request', message: 'query parameter "status" must be one of 2xx, 4xx, 429, 5xx', status: 400 });
  });

  test('when a request id from X-Request-Id is asked for, then the log finds that request, generated or client-chosen', async () => {
    const k = await developerWithKey(gw.url);
    const calls = await knownOutcomes(k);
    const found = await k.log(`?requestId=${encodeURIComponent(calls[3]!.requestId)}`);
    expect(found).toEqual([expect.objectContaining({ status: 404, code: 'not_found', requestId: calls[3]!.requestId })]);
    expect(await k.log('?requestId=client-chosen.id:1')).toEqual([expect.objectContaining({ status: 200, cache: 'MISS' })]);
    expect(await k.log('?requestId=never-seen')).toEqual([]);
  });

  test('when read a page at a time, then Link rel="next" leads through every request once, with the filters kept', async () => {
    const k = await developerWithKey(gw.url);
    await knownOutcomes(k);
    const whole = await k.log();
    const pages: Logged[][] = [];
    let url: string | undefined = `${gw.url}/portal/api/keys/${k.id}/requests?limit=4`;
    const links: Array<string | null> = [];
    while (url) {
      const res: Response = await fetch(url, { headers: { cookie: k.dev.cookie } });
      expect(res.status).toBe(200);
      pages.push(await jsonOf(res));
      const link = res.headers.get('link');
      links.push(link);
      url = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : undefined;
    }
    expect(pages.map((p) => p.length)).toEqual([4, 2]);
    expect(pages.flat()).toEqual(whole);
    // Links are absolute, on PUBLIC_URL (here its default, http://localhost:<port>).
    const publicUrl = gw.url.replace('127.0.0.1', 'localhost');
    expect(links).toEqual([`<${publicUrl}/portal/api/keys/${k.id}/requests?limit=4&after=${whole[3]!.id}>; rel="next"`, null]);

    const first = await k.read('?status=2xx&limit=1');
    expect(first.headers.get('link')).toBe(`<${publicUrl}/portal/api/keys/${k.id}/requests?limit=1&status=2xx&after=${whole[1]!.id}>; rel="next"`);
    expect(await k.log(`?status=2xx&limit=1&after=${whole[1]!.id}`)).toEqual([whole[4]]);
    expect((await k.read('?limit=6')).headers.get('link')).toBeNull();
  });

  test('when anyone but the owner asks, then another account and an unknown key both get 404, and no session gets 401', async () => {
    const k = await developerWithKey(gw.url);
    await k.call('/v1/pets?limit=1');
    const other = await signUpDeveloper(gw.url);
    const notFound = { code: 'not_found', message: 'No API key with this id exists in your account.', status: 404 };
    for (const res of [await k.read('', other.cookie), await k.read('', k.dev.cookie, 'key_AAAAAAAAAAAAAAAA'), await k.read('', k.dev.cookie, 'not-a-key')]) {
      expect(res.status).toBe(404);
      expect(await jsonOf(res)).toEqual(notFound);
    }
    const anonymous = await fetch(`${gw.url}/portal/api/keys/${k.id}/requests`);
    expect(anonymous.status).toBe(401);
    expect(await jsonOf(anonymous)).toMatchObject({ code: 'unauthorized', status: 401 });
    const post = await fetch(`${gw.url}/portal/api/keys/${k.id}/requests`, { method: 'POST', headers: { cookie: k.dev.cookie, origin: gw.url } });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect((await k.log()).length).toBe(1);
  });

  test('when the query is unknown, repeated or out of range, then 400 invalid_request names the parameter', async () => {
    const k = await developerWithKey(gw.url);
    const cases: Array<[string, string]> = [
      ['?limit=0', 'query parameter "limit" must be an integer from 1 to 100'],
      ['?limit=101', 'query parameter "limit" must be an integer from 1 to 100'],
      ['?limit=2.5', 'query parameter "limit" must be an integer from 1 to 100'],
      ['?after=yesterday', 'query parameter "after" must be the id of a logged request, as in the Link of the previous page'],
      ['?requestId=%20spaced', 'query parameter "requestId" must be 1 to 128 letters, digits, ".", "_", ":" or "-", as in X-Request-Id'],
      ['?limit=1&limit=2', 'query parameter "limit" must not be repeated'],
      ['?key=x', 'query parameter "key" is not supported; allowed: limit, after, status, requestId'],
    ];
    for (const [query, message] of cases) {
      const res = await k.read(query);
      expect([query, res.status, await jsonOf(res)]).toEqual([query, 400, { code: 'invalid_request', message, status: 400 }]);
    }
  });

  test('when requests are older than 24 hours, then they are no longer returned, while newer ones are', async () => {
    const k = await developerWithKey(gw.url);
    const dayAgo = Date.now() - DAY - 60_000;
    gw.clock.set(new Date(dayAgo));
    const old = await k.call('/v1/pets?limit=1');
    expect(await k.log()).toEqual([expect.objectContaining({ requestId: old.requestId, time: expect.stringMatching(new Date(dayAgo).toISOString().slice(0, 16)) })]);
    gw.clock.reset();
    expect(await k.log()).toEqual([]);
    const fresh = await k.call('/v1/pets?limit=1');
    expect((await k.log()).map((r) => r.requestId)).toEqual([fresh.requestId]);
  });

  test('when a query is long or holds something shaped like a key, then it is recorded cut to 512 characters, the key replaced', async () => {
    const k = await developerWithKey(gw.url);
    await k.call(`/v1/pets?token=${k.key}`);
    await k.call(`/v1/pets?name=${'n'.repeat(3000)}`);
    const [long, withKey] = await k.log();
    expect(withKey!.path).toBe('/v1/pets?token=asg_prod_[redacted]');
    expect(long!.path).toBe(`/v1/pets?name=${'n'.repeat(512 - 15)}…`);
  });

  test('when a query holds the key percent-encoded or upper-cased, then the log keeps neither form of it', async () => {
    const k = await developerWithKey(gw.url);
    const secret = k.key.slice('asg_prod_'.length);
    await k.call(`/v1/pets?x=asg%5Fprod%5F${secret}&y=ASG_PROD_${secret}`);
    const [logged] = await k.log();
    expect(logged!.path).toBe('/v1/pets?x=asg_prod_[redacted]&y=asg_prod_[redacted]');
  });

  test('when the client sends its own key as X-Request-Id, then the response and the log carry a fresh id and never the key', async () => {
    const k = await developerWithKey(gw.url);
    // Limits no other test asks for, as the list cache is shared and others expect their first call to miss.
    const calls = [await k.call('/v1/pets?limit=7', { requestId: k.key }), await k.call('/v1/pets?limit=8', { requestId: `trace.${k.key}` })];
    for (const call of calls) {
      expect(call.status).toBe(200);
      expect(call.requestId).toMatch(REQUEST_ID_FORMAT);
    }
    const logged = await k.log();
    expect(logged.map((r) => [r.path, r.requestId])).toEqual([
      ['/v1/pets?limit=8', calls[1]!.requestId],
      ['/v1/pets?limit=7', calls[0]!.requestId],
    ]);
    expect(await k.log(`?requestId=${calls[0]!.requestId}`)).toEqual([logged[1]]);
    const secret = k.key.slice('asg_prod_'.length);
    expect(JSON.stringify(logged)).not.toContain(secret);
    if (redis) {
      const stored = JSON.stringify(await redis.xrange(`${prefix}reqlog-v2:${k.id}`, '-', '+'));
      expect(stored).toContain(calls[0]!.requestId);
      expect(stored).not.toContain(secret);
    }
  });

  if (backend === 'redis') {
    test('when the stored stream is read directly, then it holds the fields of each request and never the key, a header or a body', async () => {
      const k = await developerWithKey(gw.url);
      await knownOutcomes(k);
      await k.log(); // written by now
      const stream = `${prefix}reqlog-v2:${k.id}`;
      const entries = await redis!.xrange(stream, '-', '+');
      // An entry per batch, `n` <count> `t` <newest time> `r` <records>, a record a line: [time, method, path, status, code, latencyMs, cache, requestId].
      const stored = entries.flatMap(([, fields]) => {
        expect(fields).toHaveLength(6);
        expect([fields[0], fields[2], fields[4]]).toEqual(['n', 't', 'r']);
        const lines = fields[5]!.split('\n');
        expect(lines).toHaveLength(Number(fields[1]));
        const records = lines.map((line) => JSON.parse(line) as unknown[]);
        expect(Number(fields[3])).toBe(Math.max(...records.map(([time]) => time as number)));
        return records;
      });
      expect(stored.map(([, method, path, status, code, , cache]) => [method, path, status, code, cache])).toEqual([
        ['GET', '/v1/pets?limit=2', 200, null, 'MISS'],
        ['GET', '/v1/pets?limit=2', 200, null, 'HIT'],
        ['GET', '/v1/pets?limit=abc', 400, 'invalid_request', null],
        ['GET', '/v1/pets/999999', 404, 'not_found', null],
        ['POST', '/v1/pets', 201, null, null],
        ['GET', '/v1/pets?limit=2', 429, 'rate_limited', null],
      ]);
      expect(stored.map((r) => r.length)).toEqual(Array(6).fill(8));
      const everythingStored = JSON.stringify(entries);
      for (const secret of [k.key, k.key.slice(9), 'Bearer', 'authorization', 'SecretBodyMarker', 'categoryId', k.dev.cookie.split('=')[1]!]) {
        expect(everythingStored.toLowerCase()).not.toContain(secret.toLowerCase());
      }
      const ttl = await redis!.pttl(stream);
      expect(ttl).toBeGreaterThan(DAY - 60_000);
      expect(ttl).toBeLessThanOrEqual(DAY);
      const everything = await redis!.keys(`${prefix}*`);
      for (const name of everything) expect(name).not.toContain(k.key);
    });

    test('when the stream is lost and made again (Redis restarted empty), then the new ids are above an old cursor, which leads to no newer request', async () => {
      const k = await developerWithKey(gw.url);
      for (let i = 0; i < 12; i++) await k.call('/v1/pets?limit=1', { requestId: `before-${i}` });
      const first = await k.read('?limit=5');
      const cursor = /after=([^>&]+)/.exec(first.headers.get('link')!)![1]!;
      await redis!.del(`${prefix}reqlog-v2:${k.id}`);
      for (let i = 0; i < 3; i++) await k.call('/v1/pets?limit=1', { requestId: `after-${i}` });
      expect(await k.log(`?after=${cursor}`)).toEqual([]);
      const fresh = await k.log();
      expect(fresh.map((r) => r.requestId)).toEqual(['after-2', 'after-1', 'after-0']);
      expect({ cursor, notAbove: fresh.map((r) => r.id).filter((id) => byId(id, cursor) <= 0) }).toEqual({ cursor, notAbove: [] });
    });
  }
});

describe.each(['memory', 'redis'] as const)('a busy key (%s)', (backend) => {
  const prefix = redisTestPrefix();
  let gw: TestGateway;

  beforeAll(async () => {
    const env: Record<string, string> = { RATE_LIMIT_PER_MINUTE: '100000' };
    if (backend === 'redis') Object.assign(env, { REDIS_URL: redisTestUrl(), REDIS_KEY_PREFIX: prefix });
    gw = await startTestGateway({ env });
  });
  afterAll(async () => {
    await gw?.stop();
    if (backend === 'redis') await deleteRedisKeys(prefix);
  });

  test('when a key makes more than 1,000 requests, then its log holds its last 1,000, newest first', async () => {
    const k = await developerWithKey(gw.url);
    const total = 1030;
    const requestIds: string[] = [];
    for (let sent = 0; sent < total; sent += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, i) => k.call(`/v1/pets?limit=${((sent + i) % 50) + 1}`, { requestId: `busy-${sent + i}` })));
      requestIds.push(...batch.map((c) => c.requestId));
    }
    const seen: Logged[] = [];
    let after = '';
    for (;;) {
      const res = await k.read(`?limit=100${after}`);
      seen.push(...(await jsonOf(res)));
      const link = res.headers.get('link');
      if (!link) break;
      after = `&after=${/after=([^>&]+)/.exec(link)![1]}`;
    }
    expect(seen).toHaveLength(1000);
    // Concurrent calls may end in any order; the log keeps the last 1,000 to end, and the first of each ten is long gone.
    const kept = new Set(seen.map((r) => r.requestId));
    expect(kept.size).toBe(1000);
    for (let i = 0; i < 20; i++) expect(kept.has(`busy-${i}`)).toBe(false);
    for (let i = total - 10; i < total; i++) expect(kept.has(`busy-${i}`)).toBe(true);
    const times = seen.map((r) => Date.parse(r.time));
    expect(times.every((t, i) => i === 0 || t <= times[i - 1]!)).toBe(true);
  }, 120_000);
});

describe('two gateways sharing Redis', () => {
  let pair: GatewayPair | undefined;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    pair = await startGatewayPair();
    ({ a, b } = pair);
  }, 60_000);
  afterAll(() => pair?.stop());

  test('when a key calls both, then each one shows the requests both answered, in one log, newest first', async () => {
    const k = await developerWithKey(a.url);
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      order.push((await k.call(`/v1/pets?limit=${i + 1}`, { url: a.url })).requestId);
      order.push((await k.call(`/v1/pets/${i + 100000}`, { url: b.url })).requestId);
    }
    const viaB = async () => (await jsonOf(await fetch(`${b.url}/portal/api/keys/${k.id}/requests`, { headers: { cookie: k.dev.cookie } }))) as Logged[];
    // Each process writes its own requests within a tick; the one answering the read writes its own first.
    await until('both gateways wrote their requests', async () => (await viaB()).length === 6);
    const logged = await k.log();
    expect(new Set(logged.map((r) => r.requestId))).toEqual(new Set(order));
    expect((await viaB()).map((r) => r.requestId)).toEqual(logged.map((r) => r.requestId));
    expect(logged.map((r) => r.status).sort()).toEqual([200, 200, 200, 404, 404, 404]);
  });
});

/** Log ids `<n>-<m>` in their order. */
function byId(x: string, y: string): number {
  const [xm, xs] = x.split('-').map(Number) as [number, number];
  const [ym, ys] = y.split('-').map(Number) as [number, number];
  return xm - ym || xs - ys;
}
