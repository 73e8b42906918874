import { refusal } from '../test/support/refusal';
import { createKeyChurnLimiter } from './key-churn-limiter';
import { describeWait } from './limit-refusal';

describe('key churn limiter', () => {
  afterEach(() => jest.useRealTimers());

  test('when an account has made its allowance of new keys, then the next is 429 with the wait in Retry-After, and another account is not held back', async () => {
    const limiter = createKeyChurnLimiter({ maxPerDay: 3 });
    for (let i = 0; i < 3; i++) await limiter.take(7);
    const err = await refusal(limiter.take(7));
    expect(err.toBody()).toEqual({ code: 'rate_limited', status: 429, message: 'This account has created or rolled 3 keys in 24 hours, the most it may; try again in 24 hours.' });
    expect(err.headers['Retry-After']).toBe('86400');
    await expect(limiter.take(8)).resolves.toBeInstanceOf(Function);
  });

  test('when a point is given back, then the account may make one more key, and no more', async () => {
    const limiter = createKeyChurnLimiter({ maxPerDay: 1 });
    const giveBack = await limiter.take(1);
    await giveBack();
    await limiter.take(1);
    expect((await refusal(limiter.take(1))).message).toBe('This account has created or rolled 1 key in 24 hours, the most it may; try again in 24 hours.');
  });

  test('when a point is given back after its window has ended, then the next window keeps its allowance', async () => {
    jest.useFakeTimers({ now: new Date('2026-03-01T00:00:00Z') });
    const limiter = createKeyChurnLimiter({ maxPerDay: 2 });
    const giveBack = await limiter.take(1);
    jest.setSystemTime(new Date('2026-03-02T00:00:01Z'));
    await giveBack();
    await limiter.take(1);
    await limiter.take(1);
    expect((await refusal(limiter.take(1))).status).toBe(429);
  });

  test('when the 24-hour window has passed, then the account has its whole allowance again, and the wait is said in hours before that', async () => {
    jest.useFakeTimers({ now: new Date('2026-03-01T00:00:00Z') });
    const limiter = createKeyChurnLimiter({ maxPerDay: 2 });
    await limiter.take(1);
    jest.setSystemTime(new Date('2026-03-01T21:30:00Z'));
    await limiter.take(1);
    const err = await refusal(limiter.take(1));
    expect(err.message).toMatch(/try again in 3 hours\.$/);
    expect(err.headers['Retry-After']).toBe(String(150 * 60));
    jest.setSystemTime(new Date('2026-03-02T00:00:00Z'));
    await limiter.take(1);
    await limiter.take(1);
    await refusal(limiter.take(1));
  });

  test('when waits are described, then an hour or less is in minutes and longer in whole hours, rounded up', () => {
    expect([59, 60, 3600, 3601, 7200, 86_400].map(describeWait)).toEqual(['59 seconds', '1 minute', '60 minutes', '2 hours', '2 hours', '24 hours']);
  });

  test('when the allowance is not a positive integer, then the limiter refuses to be built', () => {
    for (const bad of [0, -1, 1.5]) expect(() => createKeyChurnLimiter({ maxPerDay: bad })).toThrow('maxPerDay must be a positive integer');
  });
});
