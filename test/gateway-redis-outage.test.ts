import { GENERATION_LEASE_MS } from '../gateway/cache/redis-list-cache';
import { captureLogs } from './support/captured-logs';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { startCountedPetStore } from './support/pet-store-upstream';
import { startPrivateRedis } from './support/redis-server';

/** Redis killed under traffic and started again: no failed request, one warning, recovery by itself. */
describe('when Redis goes away and comes back', () => {
  test('then requests keep succeeding, the outage is logged once, and cache and limits resume', async () => {
    let redis = await startPrivateRedis();
    const upstream = await startCountedPetStore();
    const { lines, logger } = captureLogs<{ level: number; msg: string }>('info');
    let gw: TestGateway | undefined;
    try {
      gw = await startTestGateway({ env: { REDIS_URL: redis.url, PRODUCTION_UPSTREAM: upstream.url }, logger });
      const dev = await signUpDeveloper(gw.url);
      const list = () => fetch(`${gw!.url}/v1/pets`, { headers: { authorization: `Bearer ${dev.productionKey}` } });
      expect((await list()).headers.get('x-cache')).toBe('MISS');
      expect((await list()).headers.get('x-cache')).toBe('HIT');

      await redis.stop();
      // A generation lease granted just before holds its few ms; every lookup after it must bypass.
      await new Promise((r) => setTimeout(r, GENERATION_LEASE_MS + 1));
      const during = [];
      for (let i = 0; i < 20; i++) during.push(await list());
      expect(during.map((r) => r.status)).toEqual(Array(20).fill(200));
      for (const r of during) {
        expect(r.headers.get('x-cache')).toBe('MISS'); // bypassed: straight to the upstream
        expect(r.headers.get('ratelimit')).toMatch(/^"minute";r=\d+;t=\d+$/); // the insurance limiter holds
      }
      const warnings = lines.filter((l) => l.level === 40 && l.msg.startsWith('list cache unavailable'));
      expect(warnings).toHaveLength(1);

      redis = await startPrivateRedis(redis.port);
      let verdict: string | null = null;
      for (let i = 0; i < 60 && verdict !== 'HIT'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const res = await list();
        expect(res.status).toBe(200);
        verdict = res.headers.get('x-cache');
      }
      expect(verdict).toBe('HIT');
      expect(lines.some((l) => l.msg === 'list cache recovered')).toBe(true);
    } finally {
      await gw?.stop();
      await upstream.close();
      await redis.stop();
    }
  }, 60_000);
});
