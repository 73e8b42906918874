import { captureLogs } from './support/captured-logs';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { startPrivateRedis } from './support/redis-server';
import { until } from './support/until';

const METRICS_TOKEN = 'request-log-outage-metrics-token-0123';

/** The request log's Redis killed under traffic: every request answered, the outage's records lost, the log back by itself. */
describe('when the request log loses Redis and gets it back', () => {
  test('then every request is answered, the records of the outage are lost and counted, the outage is logged once, and logging resumes', async () => {
    let redis = await startPrivateRedis();
    const { lines, logger } = captureLogs<{ level: number; msg?: string }>('info');
    let gw: TestGateway | undefined;
    try {
      gw = await startTestGateway({ env: { REDIS_URL: redis.url, METRICS_TOKEN }, logger });
      const dev = await signUpDeveloper(gw.url);
      const { id: keyId, key } = await dev.issueKey({ name: 'through an outage' });
      const call = async (tag: string) => {
        const res = await fetch(`${gw!.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}`, 'x-request-id': tag } });
        await res.arrayBuffer();
        return res.status;
      };
      const read = () => fetch(`${gw!.url}/portal/api/keys/${keyId}/requests?limit=100`, { headers: { cookie: dev.cookie } });
      const logged = async () => ((await jsonOf(await read())) as Array<{ requestId: string }>).map((r) => r.requestId);
      const dropped = async () => {
        const text = await (await fetch(`${gw!.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
        return Number(/^asg_request_log_dropped_total\{reason="store_failed"\} (\d+)$/m.exec(text)?.[1]);
      };

      const before = [];
      for (let i = 0; i < 5; i++) before.push(await call(`before-${i}`));
      expect(await logged()).toEqual(['before-4', 'before-3', 'before-2', 'before-1', 'before-0']);
      expect(await dropped()).toBe(0);

      await redis.stop();
      // Requests go on while Redis is away, in waves the writer's timer falls between.
      const during: number[] = [];
      for (let wave = 0; wave < 4; wave++) {
        const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => call(`during-${wave * 10 + i}`)));
        during.push(...statuses);
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      expect(during).toEqual(Array(40).fill(200));
      // The last wave is dropped at the writer's next write, while Redis is still down.
      await until('the 40 records of the outage to be counted as dropped', async () => (await dropped()) >= 40);
      expect(await dropped()).toBe(40);
      // Reading needs the stream: 503 with Retry-After, not a crash or a 500.
      const unavailable = await read();
      expect([unavailable.status, unavailable.headers.get('retry-after')]).toEqual([503, '1']);
      expect(await jsonOf(unavailable)).toEqual({ code: 'service_unavailable', message: 'The request log is temporarily unavailable; retry shortly.', status: 503 });
      const outageLines = lines.filter((l) => l.msg?.startsWith('request log'));
      expect(outageLines.map((l) => [l.level, l.msg])).toEqual([[40, 'request log unavailable; bypassing it until it recovers']]);

      redis = await startPrivateRedis(redis.port);
      // The first writes after the restart may still find the connection down; they are counted too.
      let after = 0;
      await until(
        'the request log to take records again',
        async () => {
          expect(await call(`after-${after++}`)).toBe(200);
          const res = await read();
          if (res.status !== 200) return false;
          return ((await jsonOf(res)) as Array<{ requestId: string }>).some((r) => r.requestId.startsWith('after-'));
        },
        20_000,
      );
      const log = await logged();
      expect(log.some((requestId) => requestId.startsWith('during-'))).toBe(false);
      // The private Redis restarted empty: what was written before it went is gone with it; what came after is there.
      expect(log.filter((requestId) => requestId.startsWith('after-')).length).toBeGreaterThan(0);
      expect(lines.some((l) => l.msg === 'request log recovered')).toBe(true);
      expect(lines.filter((l) => l.msg?.startsWith('request log unavailable'))).toHaveLength(1);
    } finally {
      await gw?.stop();
      await redis.stop();
    }
  }, 60_000);
});
