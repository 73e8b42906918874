import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { Writable } from 'node:stream';
import Redis from 'ioredis';
import pino from 'pino';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { startPrivateRedis } from './support/redis-server';

const QUOTA = 40;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answer {
  key: string;
  method: string;
  path: string;
  status: number;
  /** When the answer was complete (ms since the epoch). */
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Redis is killed (SIGKILL) and started again on the same port while several keys keep sending
 * lists, creates and deprecated gets over keep-alive connections. Nothing the client sees may
 * change but the X-Cache verdicts: no 5xx, no dropped connection, limits still enforced. Each key
 * belongs to an account of its own: an account's keys share one budget.
 */
describe('when Redis is killed and restarted under mixed traffic', () => {
  let redis: Awaited<ReturnType<typeof startPrivateRedis>>;
  let gw: TestGateway;
  const prefix = `rrt${process.pid}:`;
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const answers: Answer[] = [];
  const dropped: Array<{ key: string; path: string; error: string }> = [];
  /** The gateway's error lines, so a failure shows its cause. */
  const errors: string[] = [];

  const send = (key: string, method: string, path: string, body?: unknown) =>
    new Promise<Answer | undefined>((resolve) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        `${gw.url}${path}`,
        { method, agent, headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            const answer = { key, method, path, status: res.statusCode!, at: Date.now(), headers: res.headers, body: text };
            answers.push(answer);
            resolve(answer);
          });
          res.on('error', (err) => {
            dropped.push({ key, path, error: `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}` });
            resolve(undefined);
          });
        },
      );
      req.on('error', (err) => {
        dropped.push({ key, path, error: `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}` });
        resolve(undefined);
      });
      req.end(payload);
    });

  beforeAll(async () => {
    redis = await startPrivateRedis();
    const sink = new Writable({
      write(chunk, _enc, done) {
        errors.push(String(chunk));
        done();
      },
    });
    gw = await startTestGateway({ env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_PER_MINUTE: String(QUOTA) }, logger: pino({ level: 'error' }, sink) });
  }, 60_000);

  afterAll(async () => {
    agent.destroy();
    await gw?.stop();
    await redis?.stop();
  });

  test('then no request fails or is dropped, the insurance limiter refuses over quota, and cache and shared limits resume by themselves', async () => {
    const developers = [];
    for (let i = 0; i < 5; i++) developers.push(await signUpDeveloper(gw.url)); // one at a time: sign-ups are capped in flight per address
    const [steady1, steady2, steady3, greedyDev, observerDev] = developers as [Developer, Developer, Developer, Developer, Developer];
    const steady = [steady1, steady2, steady3].map((d) => d.productionKey);
    const greedy = { key: greedyDev.productionKey };
    const observer = { key: observerDev.productionKey }; // its polls spend no steady key's budget
    const seed = await send(steady[0]!, 'POST', '/v1/pets', { name: 'Seed', categoryId: 1 });
    expect({ status: seed?.status, errors }).toEqual({ status: 201, errors: [] });
    const seedId = JSON.parse(seed!.body).id as number;

    // Each steady key: list, deprecated get, list, create… ten requests a second, well under its quota per phase.
    let running = true;
    const worker = async (key: string, n: number) => {
      for (let i = 0; running; i++) {
        const step = (i + n) % 4;
        if (step === 1) await send(key, 'GET', `/v1/pets/${seedId}`);
        else if (step === 3) await send(key, 'POST', '/v1/pets', { name: `Traffic ${n}-${i}`, categoryId: 2 });
        else await send(key, 'GET', '/v1/pets?limit=5');
        await sleep(100);
      }
    };
    const traffic = Promise.all(steady.map((key, n) => worker(key, n)));

    try {
      await sleep(1000);
      const killedAt = Date.now();
      await redis.stop();

      // The greedy key spends its whole budget during the outage: the in-memory insurance limiter counts it.
      const greedyAnswers: Answer[] = [];
      for (let i = 0; i < QUOTA + 10; i++) {
        const answer = await send(greedy.key, 'GET', '/v1/pets?limit=5');
        if (answer) greedyAnswers.push(answer);
      }
      expect(greedyAnswers.map((a) => a.status)).toEqual([...Array(QUOTA).fill(200), ...Array(10).fill(429)]);
      const refused = greedyAnswers.at(-1)!;
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
      expect(JSON.parse(refused.body)).toEqual({
        code: 'rate_limited',
        message: `Rate limit of ${QUOTA} requests per 60 seconds exceeded; retry in ${refused.headers['retry-after']} s.`,
        status: 429,
      });
      await sleep(Math.max(0, killedAt + 2500 - Date.now()));

      const restartedAt = Date.now();
      redis = await startPrivateRedis(redis.port);
      await sleep(2500);
      running = false;
      await traffic;

      // The cache fills and serves again by itself.
      let verdict: string | undefined;
      for (let i = 0; i < 50 && verdict !== 'HIT'; i++) {
        const answer = await send(observer.key, 'GET', '/v1/pets?limit=7');
        expect(answer?.status).toBe(200);
        verdict = answer?.headers['x-cache'] as string | undefined;
        if (verdict !== 'HIT') await sleep(100);
      }
      expect(verdict).toBe('HIT');

      // The shared limiter writes to the restarted (empty) Redis again, for every account that sent since;
      // the greedy key's, which sent only during the outage, was counted in memory alone.
      const client = new Redis(redis.url);
      try {
        const limitKeys = (await client.keys(`${prefix}rl:acct:production:*`)).sort();
        expect(limitKeys).toEqual([steady1, steady2, steady3, observerDev].map((d) => `${prefix}rl:acct:production:${d.accountId}`).sort());
        const cacheKeys = await client.keys(`${prefix}cache:production:q:*`);
        expect(cacheKeys.length).toBeGreaterThan(0);
      } finally {
        client.disconnect();
      }
      const firstHit = answers.find((a) => a.at > restartedAt && a.headers['x-cache'] === 'HIT');
      process.stdout.write(`redis-restart-traffic: ${answers.length} requests; first X-Cache HIT ${firstHit!.at - restartedAt} ms after redis-server was restarted\n`);
    } finally {
      running = false;
      await traffic;
    }

    // Over the whole run: every answer a success or the greedy key's 429, and no connection dropped.
    expect(dropped).toEqual([]);
    const unexpected = answers.filter((a) => !(a.status === 200 || a.status === 201 || (a.status === 429 && a.key === greedy.key)));
    expect({ unexpected: unexpected.map((a) => `${a.method} ${a.path} ${a.status} ${a.body}`), errors }).toEqual({ unexpected: [], errors: [] });
    const byKind = (method: string, pathStart: string) => answers.filter((a) => a.key !== greedy.key && a.method === method && a.path.startsWith(pathStart));
    for (const a of byKind('GET', `/v1/pets/${seedId}`)) expect(a.headers.deprecation).toMatch(/^@\d+$/);
    expect(byKind('POST', '/v1/pets').length).toBeGreaterThan(10);
    expect(byKind('GET', '/v1/pets/').length).toBeGreaterThan(10);
    // Every list says where it came from, also a request that waited on another's lookup while Redis was away.
    const unlabelled = byKind('GET', '/v1/pets?').filter((a) => a.headers['x-cache'] !== 'HIT' && a.headers['x-cache'] !== 'MISS');
    expect(unlabelled.map((a) => `${a.path} ${a.status} X-Cache: ${a.headers['x-cache']}`)).toEqual([]);
  }, 60_000);
});
