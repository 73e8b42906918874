import { refusal } from '../test/support/refusal';
import { createSignupLimiter } from './signup-limiter';

describe('sign-up limiter', () => {
  test('when one address signs up more often than its allowance, then 429 with the wait in Retry-After', async () => {
    const limiter = createSignupLimiter({ maxPerIp: 2 });
    for (let i = 0; i < 2; i++) (await limiter.admit('10.0.0.1')).finished();
    const err = await refusal(limiter.admit('10.0.0.1'));
    expect(err.toBody()).toEqual({ code: 'rate_limited', status: 429, message: 'Too many sign-ups from your network. Try again in 60 minutes.' });
    expect(err.headers['Retry-After']).toBe('3600');
  });

  test('when one address has two sign-ups in progress, then a third is refused at once with Retry-After 1, and admitted once one finishes', async () => {
    const limiter = createSignupLimiter();
    const first = await limiter.admit('10.0.0.2');
    await limiter.admit('10.0.0.2');
    const err = await refusal(limiter.admit('10.0.0.2'));
    expect(err.toBody()).toEqual({ code: 'rate_limited', status: 429, message: 'Too many sign-ups at once from your network. Try again in 1 second.' });
    expect(err.headers['Retry-After']).toBe('1');
    await expect(limiter.admit('10.0.0.3')).resolves.toBeDefined();
    first.finished();
    first.finished(); // finishing twice frees one slot, not two
    await limiter.admit('10.0.0.2');
    expect((await refusal(limiter.admit('10.0.0.2'))).message).toMatch(/at once/);
  });

  test('when options are not positive integers, then the limiter refuses to be built', () => {
    expect(() => createSignupLimiter({ maxInFlightPerIp: 0 })).toThrow('maxInFlightPerIp must be a positive integer');
  });
});
