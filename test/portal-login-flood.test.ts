import { startTestGateway, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

const PASSWORD = 'correct horse battery staple';

/**
 * Password hashing is slow on purpose and runs two at a time: a flood of sign-ins must be
 * refused before it is hashed, so it cannot queue ahead of other people's sign-ins.
 */
describe('portal sign-in under a flood of guesses', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  const login = (email: string, password: string, from: string) =>
    fetch(`${gw!.url}/portal/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
      body: JSON.stringify({ email, password }),
    });

  test('when one address sends 40 wrong sign-ins at once, then most are refused with 429 before hashing and another address signs in', async () => {
    gw = await startTestGateway({ env: { TRUST_PROXY: 'true' } });
    const signup = await fetch(`${gw.url}/portal/api/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.2' },
      body: JSON.stringify({ email: 'patient@example.com', password: PASSWORD }),
    });
    expect(signup.status).toBe(201);

    // An unknown email is checked against a dummy hash made on first use: made here, so the flood's checks queue at once.
    expect((await login('nobody@example.com', 'not the password', '192.0.2.1')).status).toBe(401);

    const flood = Array.from({ length: 40 }, (_, i) => login(`guess${i}@example.com`, 'not the password', '203.0.113.40'));
    await new Promise((resolve) => setTimeout(resolve, 100)); // the flood is in, then the other address signs in
    const started = performance.now();
    const patient = await login('patient@example.com', PASSWORD, '198.51.100.2');
    const patientMs = performance.now() - started;
    const answers = await Promise.all(flood);

    expect(patient.status).toBe(200);
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    const refused = answers.filter((r) => r.status === 429);
    // Two are checked at a time per address; the rest arrive while those are hashed.
    expect(refused.length).toBeGreaterThanOrEqual(30);
    expect(refused[0]!.headers.get('retry-after')).toBe('1');
    expect(await jsonOf(refused[0]!)).toEqual({ code: 'rate_limited', message: 'Too many sign-in attempts at once from your network. Try again in 1 second.', status: 429 });
    process.stdout.write(`flood: ${statuses.filter((s) => s === 429).length}/40 refused with 429; the other address signed in in ${patientMs.toFixed(0)} ms\n`);
  });

  test('when more sign-ins from many addresses wait for hashing than PASSWORD_HASH_QUEUE allows, then the extra ones get 503 with Retry-After at once, and none counts as a failure', async () => {
    gw = await startTestGateway({ env: { TRUST_PROXY: 'true', PASSWORD_HASH_QUEUE: '1' } });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => login('nobody@example.com', 'not the password', `203.0.113.${100 + i}`)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((s) => s === 401 || s === 503)).toBe(true);
    const unavailable = answers.filter((r) => r.status === 503);
    expect(unavailable.length).toBeGreaterThanOrEqual(1);
    expect(unavailable[0]!.headers.get('retry-after')).toBe('1');
    expect(await jsonOf(unavailable[0]!)).toEqual({
      code: 'service_unavailable',
      message: 'Too many passwords are being checked right now. Try again in 1 second.',
      status: 503,
    });
    // A refused attempt gave its reservation back: that address still has all 5 of its tries.
    const from = `203.0.113.${100 + statuses.indexOf(503)}`;
    for (let i = 0; i < 5; i++) expect((await login('nobody@example.com', `guess ${i}`, from)).status).toBe(401);
    expect((await login('nobody@example.com', 'guess 6', from)).status).toBe(429);
  });
});
