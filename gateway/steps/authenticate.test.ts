import { createPrometheusMetrics } from '../metrics/prometheus-metrics';
import type { GatewayRequest } from '../pipeline/pipeline';
import { createRateLimiter } from '../rate-limit/rate-limiter';
import { ResponseHeaders } from '../http/response-headers';
import { authenticate, type KeyCheck } from './authenticate';

const KEY_A = `asg_prod_${'a'.repeat(43)}`;
const KEY_B = `asg_prod_${'b'.repeat(43)}`;
const KEY_STAGING = `asg_stag_${'c'.repeat(43)}`;

/** The step with a key checker that counts how often it hashes. */
function setUp() {
  const hashed: string[] = [];
  const step = authenticate({
    keys: {
      hashOf: (secret) => {
        hashed.push(secret);
        return `hash-of-${secret}`;
      },
      check: (keyHash): KeyCheck =>
        keyHash === `hash-of-${KEY_A}`
          ? { valid: true, keyId: 'key_a', accountId: 1, plan: 'default' }
          : { valid: false, code: keyHash === `hash-of-${KEY_STAGING}` ? 'WRONG_ENVIRONMENT' : 'NOT_FOUND' },
    },
    anonymousLimiter: createRateLimiter({ name: 'anonymous', quota: 100, windowSeconds: 60, keyPrefix: 'ip' }),
    clientKey: () => '127.0.0.1',
    metrics: createPrometheusMetrics({ defaultMetrics: false }).metrics,
    usage: { recordUse: () => {} },
    // Not the shipped prefixes: the refusal must name whatever the document's servers say.
    prefixes: { production: '/live/v1', staging: '/sandbox/v1' },
  });
  const send = async (socket: object, authorization: string) => {
    const req = { headers: { authorization }, socket, ctx: { environment: 'production', headers: new ResponseHeaders() } } as unknown as GatewayRequest;
    let outcome: unknown = 'pending';
    await step(req, {} as never, (err?: unknown) => (outcome = err ?? 'next'));
    return { outcome, keyId: req.ctx.keyId };
  };
  return { hashed, send };
}

describe('authenticate step', () => {
  test('when a connection sends the same key again, then it is hashed once for that connection, and checked every time', async () => {
    const { hashed, send } = setUp();
    const connection = {};
    for (let i = 0; i < 3; i++) expect(await send(connection, `Bearer ${KEY_A}`)).toEqual({ outcome: 'next', keyId: 'key_a' });
    expect(hashed).toEqual([KEY_A]);
    // Another connection hashes for itself.
    expect(await send({}, `Bearer ${KEY_A}`)).toEqual({ outcome: 'next', keyId: 'key_a' });
    expect(hashed).toEqual([KEY_A, KEY_A]);
  });

  test('when a connection switches keys, then the new key is hashed and judged on its own', async () => {
    const { hashed, send } = setUp();
    const connection = {};
    expect((await send(connection, `Bearer ${KEY_A}`)).outcome).toBe('next');
    const refused = await send(connection, `Bearer ${KEY_B}`);
    expect(refused.outcome).toMatchObject({ code: 'unauthorized', message: 'Invalid API key.' });
    expect(refused.keyId).toBeUndefined();
    expect((await send(connection, `Bearer ${KEY_A}`)).outcome).toBe('next');
    expect(hashed).toEqual([KEY_A, KEY_B, KEY_A]);
  });

  test('when a key of the other environment is sent, then the 401 names both environments\' prefixes as the document gives them', async () => {
    const { send } = setUp();
    expect((await send({}, `Bearer ${KEY_STAGING}`)).outcome).toMatchObject({
      code: 'unauthorized',
      message: 'This API key belongs to another environment: production keys work under /live/v1, staging keys under /sandbox/v1.',
    });
  });
});
