import { request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import Redis from 'ioredis';
import { deleteRedisKeys, redisTestPrefix, redisTestUrl } from './support/databases';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { startRecordingUpstream } from './support/upstream-double';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A list of one pet named after what the upstream answered for, as a remote store might personalise it. */
const petsFor = (name: string) => JSON.stringify([{ id: 1, name, categoryId: 1, status: 'available', tags: [] }]);
const PLAIN = petsFor('Rex');

/** How the remote upstream answers one `limit`: each test has its own limit, and so its own cache entry. */
type Answering = (req: IncomingMessage, res: ServerResponse) => void;
const plain: Answering = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(PLAIN);

/**
 * The list cache replays one upstream answer to every key of an environment, so it must store
 * only what the upstream meant for anyone, and fill it as no client in particular. A remote
 * upstream that gzips, answers per account or varies, behind a real gateway, in process memory
 * and in Redis.
 */
describe.each(['memory', 'redis'] as const)('what the GET /pets cache shares between keys (%s)', (backend) => {
  let upstream: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let gw: TestGateway;
  let keyA: string;
  let keyB: string;
  let redis: Redis | undefined;
  const prefix = redisTestPrefix();
  const answers = new Map<string, Answering>();
  let nextLimit = 1;

  beforeAll(async () => {
    upstream = await startRecordingUpstream((req, res) => {
      const limit = new URL(req.url!, 'http://upstream').searchParams.get('limit') ?? '';
      (answers.get(limit) ?? plain)(req, res);
    });
    const env: Record<string, string> = { PRODUCTION_UPSTREAM: upstream.url, CACHE_TTL_SECONDS: '60' };
    if (backend === 'redis') {
      Object.assign(env, { REDIS_URL: redisTestUrl(), REDIS_KEY_PREFIX: prefix });
      redis = new Redis(redisTestUrl());
    }
    gw = await startTestGateway({ env });
    keyA = (await signUpDeveloper(gw.url)).productionKey;
    keyB = (await signUpDeveloper(gw.url)).productionKey;
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.close();
    if (redis) {
      await deleteRedisKeys(prefix, redis);
      redis.disconnect();
    }
  });

  /** GET /v1/pets with this query and exactly these headers (no client decoding or adding any), the body as sent. */
  const getList = (search: string, key: string, headers: Record<string, string> = {}) =>
    new Promise<Answer>((resolve, reject) => {
      const req = request(`${gw.url}/v1/pets${search}`, { headers: { authorization: `Bearer ${key}`, ...headers }, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });

  /** A list with its own cache entry, answered by the upstream as `answering` says. */
  const listAnswered = (answering: Answering) => {
    const limit = String(nextLimit++);
    answers.set(limit, answering);
    return {
      limit,
      get: (key: string, headers: Record<string, string> = {}) => getList(`?limit=${limit}`, key, headers),
      /** What reached the upstream for this list. */
      received: () => upstream.requests.filter((r) => r.method === 'GET' && new URL(r.url, 'http://upstream').searchParams.get('limit') === limit),
    };
  };

  /** A body a client reads as JSON is JSON: gzip bytes are never labelled as anything but gzip. */
  const expectHonestBody = (answer: Answer) => {
    if (answer.headers['content-encoding'] === undefined) expect(() => JSON.parse(answer.body.toString('utf8'))).not.toThrow();
  };

  test('when the upstream answers for anyone, then a second key is served the first one\'s entry (the cache is on in this setup)', async () => {
    const list = listAnswered(plain);
    expect((await list.get(keyA)).headers['x-cache']).toBe('MISS');
    const b = await list.get(keyB);
    expect(b.headers['x-cache']).toBe('HIT');
    expect(b.body.toString()).toBe(PLAIN);
    expect(list.received()).toHaveLength(1);
  });

  test('when a client spells a list\'s query otherwise, then the upstream is asked the query its entry\'s key names, and a key asking plainly is served that answer', async () => {
    // An upstream that reads the query string as it arrives, undecoded: the answer names what it read.
    const list = listAnswered((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(petsFor(req.url!)));
    const { limit } = list;
    const spelled = await getList(`?status=available&limit=0%3${limit[0]}${limit.slice(1)}`, keyA);
    expect([spelled.status, spelled.headers['x-cache']]).toEqual([200, 'MISS']);
    const asked = `/pets?limit=${limit}&status=available`;
    expect(list.received().map((r) => r.url)).toEqual([asked]);
    expect(spelled.body.toString()).toBe(petsFor(asked));

    const plainly = await getList(`?limit=${limit}&status=available`, keyB);
    expect([plainly.status, plainly.headers['x-cache']]).toEqual([200, 'HIT']);
    expect(plainly.body.toString()).toBe(petsFor(asked));
    expect(list.received()).toHaveLength(1);
  });

  test('when a client asks for gzip and the upstream gzips when asked, then the entry is filled as identity, and a key that did not ask for gzip gets plain JSON', async () => {
    const list = listAnswered((req, res) => {
      if (/gzip/.test(String(req.headers['accept-encoding']))) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', vary: 'Accept-Encoding' }).end(gzipSync(PLAIN));
      } else {
        res.writeHead(200, { 'content-type': 'application/json', vary: 'Accept-Encoding' }).end(PLAIN);
      }
    });
    const a = await list.get(keyA, { 'accept-encoding': 'gzip, deflate, br' });
    expect(a.status).toBe(200);
    expectHonestBody(a);
    expect(list.received()[0]!.headers['accept-encoding']).toBe('identity');

    const b = await list.get(keyB);
    expect(b.status).toBe(200);
    expect(b.headers['x-cache']).toBe('HIT');
    expect(b.headers['content-encoding']).toBeUndefined();
    expect(b.headers['content-type']).toBe('application/json');
    expect(b.body.toString()).toBe(PLAIN);
    expect(list.received()).toHaveLength(1);
  });

  test('when the upstream gzips although the gateway asked for identity, then nothing is cached: the other key reaches the upstream and gets a body labelled as gzip', async () => {
    const list = listAnswered((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync(PLAIN)));
    const a = await list.get(keyA, { 'accept-encoding': 'gzip' });
    expectHonestBody(a);
    const b = await list.get(keyB);
    expect(b.status).toBe(200);
    expect(b.headers['x-cache']).toBe('MISS');
    expect(b.headers['content-encoding']).toBe('gzip');
    expectHonestBody(b);
    expect(list.received()).toHaveLength(2);
  });

  test("when the upstream answers Cache-Control: private, then another key's list reaches the upstream again and carries its own account's data", async () => {
    const list = listAnswered((req, res) =>
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, max-age=60' }).end(petsFor(String(req.headers['x-consumer-id']))),
    );
    const a = await list.get(keyA);
    const b = await list.get(keyB);
    const again = await list.get(keyA);
    expect([a, b, again].map((r) => [r.status, r.headers['x-cache']])).toEqual([
      [200, 'MISS'],
      [200, 'MISS'],
      [200, 'MISS'],
    ]);
    const [toA, toB, toAAgain] = list.received().map((r) => String(r.headers['x-consumer-id']));
    expect(list.received()).toHaveLength(3);
    expect(toA).not.toBe(toB);
    expect(b.body.toString()).toBe(petsFor(toB!));
    expect(again.body.toString()).toBe(petsFor(toAAgain!));
    expect(b.body.toString()).not.toBe(a.body.toString());
  });

  test("when two keys ask at once and the upstream answers Cache-Control: private, then the one that waited for the other's fill is not handed that answer", async () => {
    const list = listAnswered((req, res) =>
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private' }).end(petsFor(String(req.headers['x-consumer-id']))), 150),
    );
    const [a, b] = await Promise.all([list.get(keyA), list.get(keyB)]);
    expect(list.received()).toHaveLength(2);
    const consumers = list.received().map((r) => petsFor(String(r.headers['x-consumer-id'])));
    expect([a.body.toString(), b.body.toString()].sort()).toEqual(consumers.sort());
    expect(a.body.toString()).not.toBe(b.body.toString());
  });

  test('when a list was answered Cache-Control: private, then its next requests go upstream side by side, none waiting for another\'s fill', async () => {
    const held: ServerResponse[] = [];
    let mostHeldAtOnce = 0;
    const answer = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private' }).end(PLAIN);
    const list = listAnswered((_req, res) => {
      if (list.received().length === 1) return answer(res);
      held.push(res);
      mostHeldAtOnce = Math.max(mostHeldAtOnce, held.length);
      // All three are answered together once they are here; one that never comes (it waits for another's answer) frees the others after a second.
      if (held.length === 3) held.splice(0).forEach(answer);
      setTimeout(() => {
        const at = held.indexOf(res);
        if (at !== -1) answer(held.splice(at, 1)[0]!);
      }, 1000);
    });
    await list.get(keyA);
    const answers = await Promise.all([list.get(keyA), list.get(keyB), list.get(keyB)]);
    expect(answers.map((r) => [r.status, r.headers['x-cache']])).toEqual([
      [200, 'MISS'],
      [200, 'MISS'],
      [200, 'MISS'],
    ]);
    expect(mostHeldAtOnce).toBe(3);
  });

  test.each([
    ['Vary: X-Account', { vary: 'X-Account' }],
    ['Vary: Cookie', { vary: 'Accept-Encoding, Cookie' }],
    ['Vary: *', { vary: '*' }],
    ['Cache-Control: no-store', { 'cache-control': 'no-store' }],
    ['Cache-Control: no-cache', { 'cache-control': 'no-cache' }],
    ['Set-Cookie', { 'set-cookie': 'seen=1; HttpOnly' }],
  ])('when the upstream answers with %s, then the answer is not replayed to another key: its list reaches the upstream again', async (_name, headers) => {
    const list = listAnswered((req, res) => res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(petsFor(String(req.headers['x-consumer-id']))));
    expect((await list.get(keyA)).headers['x-cache']).toBe('MISS');
    const b = await list.get(keyB);
    expect(b.status).toBe(200);
    expect(b.headers['x-cache']).toBe('MISS');
    expect(list.received()).toHaveLength(2);
    expect(b.body.toString()).toBe(petsFor(String(list.received()[1]!.headers['x-consumer-id'])));
  });

  test('when the client filling the entry sends representation, conditional, cookie and its own headers, then none reaches the upstream, nor who it is, and other keys get the answer meant for anyone', async () => {
    // An upstream that picks a language without saying Vary: only the gateway can keep it from choosing for everyone.
    const list = listAnswered((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(petsFor(String(req.headers['accept-language'] ?? 'Rex'))));
    const clientHeaders = {
      accept: 'application/xml',
      'accept-charset': 'iso-8859-1',
      'accept-language': 'fr',
      'cache-control': 'no-cache',
      cookie: 'session=of-a',
      'if-modified-since': 'Wed, 21 Oct 2015 07:28:00 GMT',
      'if-none-match': '"of-a"',
      pragma: 'no-cache',
      prefer: 'return=minimal',
      range: 'bytes=0-3',
      'x-tenant': 'of-a',
      'user-agent': 'client-a/1.0',
    };
    expect((await list.get(keyA, clientHeaders)).status).toBe(200);
    const sent = list.received()[0]!.headers;
    for (const name of Object.keys(clientHeaders)) expect([name, sent[name]]).toEqual([name, undefined]);
    expect(sent['accept-encoding']).toBe('identity');
    // Nor who asked: an upstream cannot tailor a shared answer to the filling key or its address.
    for (const name of ['x-consumer-id', 'x-api-key-id', 'x-forwarded-for', 'x-real-ip']) expect([name, sent[name]]).toEqual([name, undefined]);

    const b = await list.get(keyB, { 'accept-language': 'de' });
    expect(b.headers['x-cache']).toBe('HIT');
    expect(b.body.toString()).toBe(PLAIN);
    expect(list.received()).toHaveLength(1);
  });

  test('when the upstream tailors a list to the caller it is told of, without saying so, then a fill tells it of none: no key is served another account\'s list', async () => {
    const list = listAnswered((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(petsFor(`for ${String(req.headers['x-consumer-id'] ?? 'anyone')}`)));
    const a = await list.get(keyA);
    expect(a.body.toString()).toBe(petsFor('for anyone'));
    const b = await list.get(keyB);
    expect(b.headers['x-cache']).toBe('HIT');
    expect(b.body.toString()).toBe(petsFor('for anyone'));
  });
});
