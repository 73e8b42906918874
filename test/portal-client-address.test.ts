import { startTestGateway, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

const PASSWORD = 'correct horse battery staple';

/**
 * Behind a trusted proxy (TRUST_PROXY=true) the sign-in limits key on the address the proxy
 * appended to X-Forwarded-For, never on the entries to its left, which the client writes.
 */
describe('portal sign-in limits behind a trusted proxy', () => {
  let gw: TestGateway;

  const post = (path: string, body: unknown, forwardedFor: string) =>
    fetch(`${gw.url}/portal/api/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    gw = await startTestGateway({ env: { TRUST_PROXY: 'true' } });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  test('when a client rotates the leftmost X-Forwarded-For entry, then its guesses still count against the one address the proxy appended', async () => {
    expect((await post('signup', { email: 'rotated@example.com', password: PASSWORD }, '198.51.100.10')).status).toBe(201);
    for (let i = 0; i < 5; i++) {
      const res = await post('login', { email: 'rotated@example.com', password: `wrong guess ${i}` }, `10.9.8.${i}, 203.0.113.5`);
      expect(res.status).toBe(401);
    }
    const locked = await post('login', { email: 'rotated@example.com', password: PASSWORD }, '10.9.8.99, 203.0.113.5');
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
    expect(await jsonOf(locked)).toEqual({ code: 'rate_limited', message: 'Too many failed sign-in attempts for this account. Try again in 15 minutes.', status: 429 });
  });

  test("when an attacker writes the victim's address leftmost, then the attacker is locked out and the victim is not", async () => {
    const victimAddress = '198.51.100.77';
    expect((await post('signup', { email: 'victim@example.com', password: PASSWORD }, victimAddress)).status).toBe(201);
    for (let i = 0; i < 5; i++) {
      expect((await post('login', { email: 'victim@example.com', password: `wrong guess ${i}` }, `${victimAddress}, 203.0.113.66`)).status).toBe(401);
    }
    expect((await post('login', { email: 'victim@example.com', password: PASSWORD }, `${victimAddress}, 203.0.113.66`)).status).toBe(429);
    const victim = await post('login', { email: 'victim@example.com', password: PASSWORD }, victimAddress);
    expect(victim.status).toBe(200);
    expect((await jsonOf(victim)).email).toBe('victim@example.com');
  });

  test('when sign-ups rotate the leftmost X-Forwarded-For entry, then they share the allowance of the address the proxy appended', async () => {
    // A weak password is refused after the sign-up is counted, so the allowance is spent without hashing.
    for (let i = 0; i < 20; i++) {
      expect((await post('signup', { email: `spray${i}@example.com`, password: 'short' }, `10.7.7.${i}, 203.0.113.20`)).status).toBe(400);
    }
    const refused = await post('signup', { email: 'spray-last@example.com', password: PASSWORD }, '10.7.7.250, 203.0.113.20');
    expect(refused.status).toBe(429);
    expect(await jsonOf(refused)).toEqual({ code: 'rate_limited', message: 'Too many sign-ups from your network. Try again in 60 minutes.', status: 429 });
    expect((await post('signup', { email: 'spray-other@example.com', password: PASSWORD }, '203.0.113.21')).status).toBe(201);
  });

  test('when an IPv6 client rotates addresses inside its /64, then its sign-ups share one allowance, and the next /64 has its own', async () => {
    for (let i = 0; i < 20; i++) {
      expect((await post('signup', { email: `v6spray${i}@example.com`, password: 'short' }, `2001:db8:77:1::${(i + 1).toString(16)}`)).status).toBe(400);
    }
    const refused = await post('signup', { email: 'v6-last@example.com', password: PASSWORD }, '2001:db8:77:1:ffff:ffff:ffff:fffe');
    expect(refused.status).toBe(429);
    expect(await jsonOf(refused)).toEqual({ code: 'rate_limited', message: 'Too many sign-ups from your network. Try again in 60 minutes.', status: 429 });
    expect((await post('signup', { email: 'v6-next@example.com', password: PASSWORD }, '2001:db8:77:2::1')).status).toBe(201);
  });
});
