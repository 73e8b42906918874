import { RateLimiterMemory } from 'rate-limiter-flexible';
import { createBudgetLeases, type BudgetLeasesOptions, type LeaseCounter } from './budget-leases';
import { leaseCounter } from './limiter-factory';
import type { RateDecision } from './rate-limiter';

/** A real in-memory fixed-window counter, with the tokens each call asked for recorded. */
function countedCounter(quota: number, windowSeconds = 60) {
  const limiter = new RateLimiterMemory({ points: quota, duration: windowSeconds });
  const asked: number[] = [];
  return {
    asked,
    counter: leaseCounter({
      consume: (key: string, points = 1) => {
        asked.push(points);
        return limiter.consume(key, points);
      },
    }),
  };
}

/** Leases under one fixed limit, as the anonymous budget spends them. */
function leasesOf(quota: number, options: BudgetLeasesOptions) {
  const leases = createBudgetLeases(options);
  return (key: string) => leases.consume(key, quota);
}

const settle = (decision: RateDecision | Promise<RateDecision>) => Promise.resolve(decision);

/** An in-memory count per key whose window ends at a fixed instant (as a calendar month's does), with the tokens asked for recorded. */
function countUntil(resetAt: number) {
  const counts = new Map<string, number>();
  const asked: number[] = [];
  const counter: LeaseCounter = {
    take: async (key, tokens) => {
      asked.push(tokens);
      const consumed = (counts.get(key) ?? 0) + tokens;
      counts.set(key, consumed);
      return { consumed, resetAt };
    },
  };
  return { counter, asked, counts };
}

describe('budget leases', () => {
  test('when a key has a small quota, then every request is counted one by one, with exact remaining counts', async () => {
    const { counter, asked } = countedCounter(5);
    const consume = leasesOf(5, { counter, windowMs: 60_000 });
    const decisions: RateDecision[] = [];
    for (let i = 0; i < 7; i++) decisions.push(await settle(consume('key_a')));
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
    ]);
    for (const d of decisions) expect(d.resetSeconds).toBeGreaterThanOrEqual(59);
    // Five single tokens and one refusal; the seventh request was refused from memory.
    expect(asked).toEqual([1, 1, 1, 1, 1, 1]);
  });

  test('when a key sends fast, then leases grow and most requests cost no counter call, with the same remaining counts', async () => {
    const quota = 1_000_000;
    const { counter, asked } = countedCounter(quota);
    // All 5,000 in one instant of the leases' clock: a slow or busy machine does not pass for a slow key.
    const at = Date.now();
    const consume = leasesOf(quota, { counter, windowMs: 60_000, clock: () => at });
    const remaining: number[] = [];
    for (let i = 0; i < 5000; i++) remaining.push((await settle(consume('busy'))).remaining);
    expect(remaining).toEqual(Array.from({ length: 5000 }, (_, i) => quota - 1 - i));
    expect(asked.length).toBeLessThan(20);
    expect(Math.max(...asked)).toBe(1024);
  });

  test('when a busy key has spent half its lease, then the next is taken ahead and its requests stop waiting for the counter', async () => {
    const quota = 1_000_000;
    const limiter = new RateLimiterMemory({ points: quota, duration: 60 });
    const asked: number[] = [];
    // 20 requests and half a millisecond of the leases' clock a turn (40,000 requests/s), however slowly
    // the machine runs the turns: a 1,024-token lease is spent in 26 ms of it, fast enough to keep its size.
    let at = Date.now();
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    // Answers a turn of the event loop later, as Redis does.
    const counter = leaseCounter({
      consume: async (key: string, points = 1) => {
        asked.push(points);
        await nextTurn();
        return limiter.consume(key, points);
      },
    });
    const consume = leasesOf(quota, { counter, windowMs: 60_000, clock: () => at });
    const remaining: number[] = [];
    let waitedAfterGrowth = 0;
    for (let turn = 0; turn < 500; turn++) {
      const decisions = Array.from({ length: 20 }, () => consume('busy'));
      // By turn 50 (1,000 requests) leases have grown to their largest, 1,024 tokens.
      if (turn >= 50) waitedAfterGrowth += decisions.filter((d) => d instanceof Promise).length;
      for (const d of await Promise.all(decisions)) remaining.push(d.remaining);
      await nextTurn();
      at += 0.5;
    }
    expect(waitedAfterGrowth).toBe(0);
    // Counts stay exact, and at most half a lease more is taken than was spent.
    expect(remaining).toEqual(Array.from({ length: 10_000 }, (_, i) => quota - 1 - i));
    expect(asked.reduce((a, b) => a + b, 0) - 10_000).toBeLessThanOrEqual(1024 + 512);
  });

  test('when the window ends while a busy key takes tokens ahead, then its unspent tokens of the old window are not carried into the new one', async () => {
    const quota = 100_000;
    const limiter = new RateLimiterMemory({ points: quota, duration: 1 });
    let calls = 0;
    let gate: Promise<void> | undefined;
    const counter = leaseCounter({
      consume: async (key: string, points = 1) => {
        calls++;
        await gate;
        return limiter.consume(key, points);
      },
    });
    const consume = leasesOf(quota, { counter, windowMs: 1000 });
    // Grow the lease past the size renewed ahead (16), answering at once.
    for (let i = 0; i < 200; i++) await settle(consume('busy'));
    // Hold the counter's next answer until the window has ended; spend until the next tokens are asked for.
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const started = Date.now();
    const callsBefore = calls;
    while (calls === callsBefore) expect(consume('busy')).not.toBeInstanceOf(Promise);
    await new Promise((resolve) => setTimeout(resolve, 1100 - (Date.now() - started)));
    open();
    gate = undefined;
    // The first request of the new window: only the tokens taken in it count, one of them its own.
    expect(await settle(consume('busy'))).toMatchObject({ allowed: true, remaining: quota - 1 });
  });

  test('when requests arrive together without tokens, then they share one counter call', async () => {
    const { counter, asked } = countedCounter(1_000_000);
    const consume = leasesOf(1_000_000, { counter, windowMs: 60_000 });
    await settle(consume('together'));
    const burst = await Promise.all(Array.from({ length: 3 }, () => settle(consume('together'))));
    expect(burst.every((d) => d.allowed)).toBe(true);
    expect(asked.length).toBeLessThanOrEqual(3);
  });

  test('when two processes spend one shared budget fast, then together they never admit more than the quota, and hardly fewer', async () => {
    const quota = 20_000;
    const { counter } = countedCounter(quota);
    const a = leasesOf(quota, { counter, windowMs: 60_000 });
    const b = leasesOf(quota, { counter, windowMs: 60_000 });
    let admitted = 0;
    for (let i = 0; i < quota + 2000; i++) if ((await settle((i % 3 ? a : b)('shared'))).allowed) admitted++;
    expect(admitted).toBeLessThanOrEqual(quota);
    // What one process still holds unspent when the other is refused: at most 1/64 of what was left per lease.
    expect(admitted).toBeGreaterThanOrEqual(quota - quota / 64);
  });

  test('when the window ends, then a refused key gets a fresh budget', async () => {
    const { counter } = countedCounter(2, 1);
    const consume = leasesOf(2, { counter, windowMs: 1000 });
    expect((await settle(consume('k'))).allowed).toBe(true);
    expect((await settle(consume('k'))).allowed).toBe(true);
    expect((await settle(consume('k'))).allowed).toBe(false);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await settle(consume('k'))).toMatchObject({ allowed: true, remaining: 1 });
  });

  test('when the counter fails, then the request fails and the next one asks again', async () => {
    let fail = true;
    const limiter = new RateLimiterMemory({ points: 10, duration: 60 });
    const consume = leasesOf(10, {
      counter: leaseCounter({ consume: (key: string, points?: number) => (fail ? Promise.reject(new Error('store down')) : limiter.consume(key, points)) }),
      windowMs: 60_000,
    });
    await expect(settle(consume('k'))).rejects.toThrow('store down');
    fail = false;
    expect(await settle(consume('k'))).toMatchObject({ allowed: true, remaining: 9 });
  });

  test('when the limit is raised after a refusal, then the refusal no longer holds and the next request is counted under the new limit', async () => {
    const at = Date.UTC(2026, 10, 30, 12);
    const { counter, asked } = countUntil(Date.UTC(2026, 11, 1));
    const leases = createBudgetLeases({ counter, windowMs: 28 * 86_400_000, clock: () => at });
    for (let i = 0; i < 3; i++) expect((await settle(leases.consume('acct', 3))).allowed).toBe(true);
    expect(await settle(leases.consume('acct', 3))).toEqual({ allowed: false, remaining: 0, resetSeconds: 12 * 3600 });
    expect(leases.refusal('acct', 3)).toEqual({ allowed: false, remaining: 0, resetSeconds: 12 * 3600 });
    expect(asked).toEqual([1, 1, 1, 1]);
    // The refused take counted its token: 4 of the new 6 are gone, so one more is admitted.
    expect(leases.refusal('acct', 6)).toBeUndefined();
    expect(await settle(leases.consume('acct', 6))).toEqual({ allowed: true, remaining: 1, resetSeconds: 12 * 3600 });
    expect(await settle(leases.consume('acct', 6))).toEqual({ allowed: true, remaining: 0, resetSeconds: 12 * 3600 });
    expect((await settle(leases.consume('acct', 6))).allowed).toBe(false);
    expect(asked).toEqual([1, 1, 1, 1, 1, 1, 1]);
  });

  test('when the limit is lowered while a lease holds tokens, then those tokens are spent and nothing more', async () => {
    const at = Date.now();
    const { counter, asked } = countUntil(at + 60_000);
    const leases = createBudgetLeases({ counter, windowMs: 60_000, clock: () => at });
    // Spent fast, leases grow: 1, 2, 4, then 8 tokens taken for the eighth request.
    for (let i = 0; i < 8; i++) await settle(leases.consume('acct', 10_000));
    expect(asked).toEqual([1, 2, 4, 8]);
    const held = 7;
    const after: RateDecision[] = [];
    for (let i = 0; i < 10; i++) after.push(await settle(leases.consume('acct', 5)));
    expect(after.map((d) => d.allowed)).toEqual([...Array<boolean>(held).fill(true), false, false, false]);
    // What is left is the lease's own: the counter (15 taken) is past the new limit.
    expect(after.slice(0, held).map((d) => d.remaining)).toEqual([6, 5, 4, 3, 2, 1, 0]);
    // One take under the new limit, refused; the refusals after it come from memory.
    expect(asked).toEqual([1, 2, 4, 8, 1]);
  });

  test('when asked for a refusal, then only a spent lease under the same limit gives one, and nothing is spent', async () => {
    const at = Date.now();
    const { counter, asked } = countUntil(at + 60_000);
    const leases = createBudgetLeases({ counter, windowMs: 60_000, clock: () => at });
    expect(leases.refusal('acct', 2)).toBeUndefined();
    expect(await settle(leases.consume('acct', 2))).toMatchObject({ allowed: true, remaining: 1 });
    expect(leases.refusal('acct', 2)).toBeUndefined();
    expect(await settle(leases.consume('acct', 2))).toMatchObject({ allowed: true, remaining: 0 });
    expect(await settle(leases.consume('acct', 2))).toMatchObject({ allowed: false, remaining: 0 });
    expect(leases.refusal('acct', 2)).toEqual({ allowed: false, remaining: 0, resetSeconds: 60 });
    expect(leases.refusal('other', 2)).toBeUndefined();
    expect(asked).toEqual([1, 1, 1]);
  });

  test('when the window ends at a fixed instant, then the refusal holds until then, counting the seconds to it, and the next window starts afresh', async () => {
    let at = Date.UTC(2026, 10, 30, 23, 59, 30, 250);
    const monthEnd = Date.UTC(2026, 11, 1);
    const november = countUntil(monthEnd);
    const december = countUntil(Date.UTC(2027, 0, 1));
    let counter = november.counter;
    const leases = createBudgetLeases({ counter: { take: (key, tokens) => counter.take(key, tokens) }, windowMs: 28 * 86_400_000, clock: () => at });
    expect(await settle(leases.consume('acct', 1))).toEqual({ allowed: true, remaining: 0, resetSeconds: 30 });
    expect(await settle(leases.consume('acct', 1))).toEqual({ allowed: false, remaining: 0, resetSeconds: 30 });
    at = monthEnd - 1;
    expect(leases.consume('acct', 1)).toEqual({ allowed: false, remaining: 0, resetSeconds: 1 });
    at = monthEnd;
    counter = december.counter;
    expect(leases.refusal('acct', 1)).toBeUndefined();
    expect(await settle(leases.consume('acct', 1))).toEqual({ allowed: true, remaining: 0, resetSeconds: 31 * 86_400 });
    expect(november.asked).toEqual([1, 1]);
    expect(december.asked).toEqual([1]);
  });
});
