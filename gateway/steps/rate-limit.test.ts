import { headersSet, refusalOf, runStep, stepRequest } from '../../test/support/run-step';
import type { GatewayMetrics, RateLimitKind } from '../metrics/gateway-metrics';
import { createRateLimiter, type RateDecision, type RateLimiter } from '../rate-limit/rate-limiter';
import { rateLimitPerKey } from './rate-limit';

const POLICY = '"default";q=600;w=60';

/** The step over `limiter`, with metrics that record what was refused; `send` runs it for a request authenticated as `keyId`. */
function setUp(limiter: RateLimiter) {
  const limited: RateLimitKind[] = [];
  const ignore = () => {};
  const metrics: GatewayMetrics = { requestFinished: ignore, cacheLookup: ignore, upstreamFinished: ignore, refusedEarly: ignore, rateLimited: (kind) => void limited.push(kind) };
  const step = rateLimitPerKey(limiter, metrics);
  const send = async (keyId: string) => {
    const req = stepRequest({ ctx: { keyId } });
    const outcome = await runStep(step, req);
    return { outcome, headers: headersSet(req) };
  };
  return { limited, send };
}

/** A 600-per-minute limiter whose decision the test dictates, at once or after a round trip; it records the keys asked for. */
function dictated(decision: RateDecision, roundTrip: boolean) {
  const asked: string[] = [];
  const limiter: RateLimiter = {
    policy: { name: 'default', quota: 600, windowSeconds: 60 },
    consume: (key) => {
      asked.push(key);
      return roundTrip ? new Promise((resolve) => setImmediate(() => resolve(decision))) : decision;
    },
  };
  return { asked, limiter };
}

describe('rate-limit step', () => {
  test.each([
    ['at once', false],
    ['after a round trip', true],
  ])('when the key has budget left (answered %s), then the policy and what is left are set, and it goes on', async (_label, roundTrip) => {
    const { asked, limiter } = dictated({ allowed: true, remaining: 598, resetSeconds: 42 }, roundTrip);
    const { limited, send } = setUp(limiter);
    expect(await send('key_a')).toEqual({ outcome: { next: 1 }, headers: { 'RateLimit-Policy': POLICY, RateLimit: '"default";r=598;t=42' } });
    expect(asked).toEqual(['key_a']);
    expect(limited).toEqual([]);
  });

  test.each([
    ['at once', false],
    ['after a round trip', true],
  ])('when the key has spent its budget (answered %s), then it is refused with 429 and Retry-After, the headers say none is left, and it is counted', async (_label, roundTrip) => {
    const { limiter } = dictated({ allowed: false, remaining: 0, resetSeconds: 42 }, roundTrip);
    const { limited, send } = setUp(limiter);
    const { outcome, headers } = await send('key_a');
    expect(refusalOf(outcome)).toEqual({
      next: 0,
      body: { code: 'rate_limited', status: 429, message: 'Rate limit of 600 requests per 60 seconds exceeded; retry in 42 s.' },
      headers: { 'Retry-After': '42' },
    });
    expect(headers).toEqual({ 'RateLimit-Policy': POLICY, RateLimit: '"default";r=0;t=42' });
    expect(limited).toEqual(['key']);
  });

  test('when the counter fails, then the request fails with that error, without going on or counting a refusal', async () => {
    const failure = new Error('Redis is away');
    const { limited, send } = setUp({ policy: { name: 'default', quota: 600, windowSeconds: 60 }, consume: () => Promise.reject(failure) });
    expect((await send('key_a')).outcome).toEqual({ next: 0, error: failure });
    expect(limited).toEqual([]);
  });

  test('when one key spends its budget on the real limiter, then that key is refused and another key still goes on', async () => {
    const { limited, send } = setUp(createRateLimiter({ name: 'default', quota: 2, windowSeconds: 60, keyPrefix: 'key' }));
    const rateOf = async (keyId: string) => {
      const { outcome, headers } = await send(keyId);
      return { next: outcome.next, code: refusalOrNone(outcome.error), policy: headers['RateLimit-Policy'], remaining: /;r=(\d+);/.exec(headers.RateLimit ?? '')?.[1] };
    };
    expect(await rateOf('key_a')).toEqual({ next: 1, code: 'none', policy: '"default";q=2;w=60', remaining: '1' });
    expect(await rateOf('key_a')).toEqual({ next: 1, code: 'none', policy: '"default";q=2;w=60', remaining: '0' });
    expect(await rateOf('key_a')).toEqual({ next: 0, code: 'rate_limited', policy: '"default";q=2;w=60', remaining: '0' });
    expect(await rateOf('key_b')).toEqual({ next: 1, code: 'none', policy: '"default";q=2;w=60', remaining: '1' });
    expect(limited).toEqual(['key']);
  });
});

function refusalOrNone(error: unknown): string {
  return error === undefined ? 'none' : ((error as { code?: string }).code ?? String(error));
}
