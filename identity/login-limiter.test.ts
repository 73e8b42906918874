import { refusal } from '../test/support/refusal';
import { createLoginLimiter } from './login-limiter';

describe('login limiter', () => {
  test('when an email fails 5 times from one address, then the 6th attempt is refused for 15 minutes with Retry-After', async () => {
    const limiter = createLoginLimiter();
    for (let i = 0; i < 5; i++) await (await limiter.begin('ada@example.com', '10.0.0.1')).failed();
    const err = await refusal(limiter.begin('ada@example.com', '10.0.0.1'));
    expect(err.toBody()).toEqual({ code: 'rate_limited', status: 429, message: 'Too many failed sign-in attempts for this account. Try again in 15 minutes.' });
    expect(Number(err.headers['Retry-After'])).toBeGreaterThan(14 * 60);
    expect(Number(err.headers['Retry-After'])).toBeLessThanOrEqual(15 * 60);
  });

  test('when the email differs only in case and spaces, then it counts as the same account', async () => {
    const limiter = createLoginLimiter({ maxConsecutiveFailures: 2 });
    await (await limiter.begin('Ada@Example.com', '10.0.0.1')).failed();
    await (await limiter.begin(' ada@example.com ', '10.0.0.1')).failed();
    expect((await refusal(limiter.begin('ADA@EXAMPLE.COM', '10.0.0.1'))).code).toBe('rate_limited');
  });

  test('when a login succeeds, then the consecutive failures start again from zero', async () => {
    const limiter = createLoginLimiter({ maxConsecutiveFailures: 3 });
    for (let i = 0; i < 2; i++) await (await limiter.begin('ada@example.com', '10.0.0.1')).failed();
    await (await limiter.begin('ada@example.com', '10.0.0.1')).succeeded();
    for (let i = 0; i < 3; i++) await (await limiter.begin('ada@example.com', '10.0.0.1')).failed();
    expect((await refusal(limiter.begin('ada@example.com', '10.0.0.1'))).code).toBe('rate_limited');
  });

  test('when an account is locked from one address, then it can still sign in from another', async () => {
    const limiter = createLoginLimiter({ maxConsecutiveFailures: 2 });
    for (let i = 0; i < 2; i++) await (await limiter.begin('ada@example.com', '10.0.0.1')).failed();
    await expect(limiter.begin('ada@example.com', '10.0.0.2')).resolves.toBeDefined();
  });

  test('when guesses arrive in parallel, then no more than the allowed attempts get through', async () => {
    const limiter = createLoginLimiter({ maxInFlightPerIp: 20 });
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => limiter.begin('ada@example.com', '10.0.0.1')));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
  });

  test('when one address has two attempts being checked, then a third is refused at once with Retry-After 1, before any counter is touched', async () => {
    const limiter = createLoginLimiter({ maxFailuresPerIp: 3 });
    const first = await limiter.begin('ada@example.com', '10.0.0.6');
    const second = await limiter.begin('bob@example.com', '10.0.0.6');
    const err = await refusal(limiter.begin('cy@example.com', '10.0.0.6'));
    expect(err.toBody()).toEqual({ code: 'rate_limited', status: 429, message: 'Too many sign-in attempts at once from your network. Try again in 1 second.' });
    expect(err.headers['Retry-After']).toBe('1');
    await expect(limiter.begin('ada@example.com', '10.0.0.7')).resolves.toBeDefined(); // another address is not held up
    await first.failed();
    await second.cancel();
    // The refused attempt took none of the address's 3 failures: two more begin, a third is over the budget.
    await (await limiter.begin('cy@example.com', '10.0.0.6')).failed();
    await (await limiter.begin('dee@example.com', '10.0.0.6')).failed();
    expect((await refusal(limiter.begin('eve@example.com', '10.0.0.6'))).message).toMatch(/^Too many failed sign-in attempts from your network/);
  });

  test('when an attempt ends in any way, or is refused by a counter, then its in-flight slot is free again', async () => {
    const limiter = createLoginLimiter({ maxInFlightPerIp: 1, maxConsecutiveFailures: 1 });
    await (await limiter.begin('ada@example.com', '10.0.0.8')).failed();
    expect((await refusal(limiter.begin('ada@example.com', '10.0.0.8'))).message).toMatch(/for this account/); // locked, slot given back
    const attempt = await limiter.begin('bob@example.com', '10.0.0.8');
    await attempt.succeeded();
    await attempt.succeeded(); // a second report does not free a slot it no longer holds
    await (await limiter.begin('cy@example.com', '10.0.0.8')).cancel();
    const held = await limiter.begin('dee@example.com', '10.0.0.8');
    expect((await refusal(limiter.begin('eve@example.com', '10.0.0.8'))).message).toMatch(/at once/);
    await held.cancel();
  });

  test('when one address fails too often across many emails, then it is refused with a message about the network', async () => {
    const limiter = createLoginLimiter({ maxFailuresPerIp: 3 });
    for (let i = 0; i < 3; i++) await (await limiter.begin(`user${i}@example.com`, '10.0.0.9')).failed();
    const err = await refusal(limiter.begin('someone@example.com', '10.0.0.9'));
    expect(err.message).toBe('Too many failed sign-in attempts from your network. Try again in 60 minutes.');
    expect(err.headers['Retry-After']).toBe('3600');
  });

  test('when logins from one address succeed, then they do not count against its failure budget', async () => {
    const limiter = createLoginLimiter({ maxFailuresPerIp: 2 });
    for (let i = 0; i < 10; i++) await (await limiter.begin(`user${i}@example.com`, '10.0.0.3')).succeeded();
    await expect(limiter.begin('another@example.com', '10.0.0.3')).resolves.toBeDefined();
  });

  test('when an attempt is cancelled, then it does not count', async () => {
    const limiter = createLoginLimiter({ maxConsecutiveFailures: 1, maxFailuresPerIp: 1 });
    await (await limiter.begin('ada@example.com', '10.0.0.4')).cancel();
    await expect(limiter.begin('ada@example.com', '10.0.0.4')).resolves.toBeDefined();
  });

  test('when the lockout is short, then Retry-After is in seconds and the message says so', async () => {
    const limiter = createLoginLimiter({ maxConsecutiveFailures: 1, lockoutSeconds: 30 });
    await (await limiter.begin('ada@example.com', '10.0.0.5')).failed();
    const err = await refusal(limiter.begin('ada@example.com', '10.0.0.5'));
    expect(err.message).toBe('Too many failed sign-in attempts for this account. Try again in 30 seconds.');
    expect(err.headers['Retry-After']).toBe('30');
  });

  test('when options are not positive integers, then the limiter refuses to be built', () => {
    expect(() => createLoginLimiter({ lockoutSeconds: 0 })).toThrow('lockoutSeconds must be a positive integer');
  });
});
