import { createGenerationLeases, waitOutLeases } from './generation-lease';

/** A clock, a turn end run by hand, and a generation read whose answers the test gives. */
function harness(leaseMs = 10) {
  let time = 1000;
  const turnEnd: Array<() => void> = [];
  const sent: Array<{ environment: string; at: number; answer: (generation: number) => void; fail: (err: Error) => void }> = [];
  const leases = createGenerationLeases({
    leaseMs,
    now: () => time,
    atTurnEnd: (task) => turnEnd.push(task),
    read: (environment) =>
      new Promise<number>((answer, fail) => {
        sent.push({ environment, at: time, answer, fail });
      }),
  });
  return {
    leases,
    sent,
    advance: (ms: number) => (time += ms),
    endTurn: () => turnEnd.splice(0).forEach((task) => task()),
    /** Lets the read's `then` handlers run. */
    settle: () => new Promise((resolve) => setImmediate(resolve)),
    /** A first read of production, sent at the turn's end and answered at once: a lease from now. */
    async grant(generation: number) {
      const first = leases.current('production');
      turnEnd.splice(0).forEach((task) => task());
      sent.at(-1)!.answer(generation);
      expect(await first).toBe(generation);
    },
  };
}

describe('generation leases', () => {
  test('when no lease is held, then the requests of a turn share one read, sent at the end of the turn, after they all arrived', async () => {
    const h = harness();
    const first = h.leases.current('production');
    const second = h.leases.current('production');
    const staging = h.leases.current('staging');
    expect(first).toBeInstanceOf(Promise);
    expect(second).toBe(first);
    expect(h.sent).toHaveLength(0); // nothing leaves before the turn's end
    h.endTurn();
    expect(h.sent.map((s) => s.environment)).toEqual(['production', 'staging']);
    h.sent[0]!.answer(7);
    h.sent[1]!.answer(3);
    expect(await Promise.all([first, second, staging])).toEqual([7, 7, 3]);
  });

  test('while the lease holds, then the generation is known at once and nothing is read', async () => {
    const h = harness(10);
    await h.grant(7);
    h.advance(4);
    expect(h.leases.current('production')).toBe(7);
    h.endTurn();
    expect(h.sent).toHaveLength(1);
  });

  test('when a read answers late, then its lease still runs from when it was sent, not from the answer', async () => {
    const h = harness(10);
    const first = h.leases.current('production');
    h.endTurn();
    h.advance(8); // Redis took 8 ms to answer
    h.sent[0]!.answer(7);
    await first;
    h.advance(2); // 10 ms after the read was sent: the lease is over
    const next = h.leases.current('production');
    expect(next).toBeInstanceOf(Promise);
    h.endTurn();
    expect(h.sent).toHaveLength(2);
  });

  test('when half the lease has gone, then one read is sent at the turn end while the generation is still answered at once; its answer extends the lease', async () => {
    const h = harness(10);
    await h.grant(7);
    h.advance(6);
    expect(h.leases.current('production')).toBe(7);
    expect(h.leases.current('production')).toBe(7);
    h.endTurn();
    expect(h.sent).toHaveLength(2); // one refresh, however many requests asked
    h.sent[1]!.answer(8);
    await h.settle();
    h.advance(9); // 15 ms after the first read, 9 after the refresh
    expect(h.leases.current('production')).toBe(8);
  });

  test('when a read is in flight, then a request within its lease shares it, and one after its lease gets a read of its own', async () => {
    const h = harness(10);
    h.leases.current('production');
    h.endTurn(); // sent at t=1000, not answered yet
    h.advance(3);
    const within = h.leases.current('production');
    expect(within).toBeInstanceOf(Promise);
    h.endTurn();
    expect(h.sent).toHaveLength(1);
    h.advance(8); // 11 ms after the read in flight was sent
    const after = h.leases.current('production');
    expect(after).not.toBe(within);
    h.endTurn();
    expect(h.sent).toHaveLength(2);
  });

  test('when an older read answers after a newer one, then the newer one\'s generation stands (a counter Redis restarted may go down)', async () => {
    const h = harness(10);
    h.leases.current('production');
    h.endTurn();
    h.advance(11);
    const second = h.leases.current('production');
    h.endTurn();
    h.sent[1]!.answer(5); // the newer read: the counter restarted lower
    await second;
    h.sent[0]!.answer(900);
    await h.settle();
    expect(h.leases.current('production')).toBe(5);
  });

  test('when another read learns the generation, then its send time starts a lease as a generation read would', () => {
    const h = harness(10);
    h.leases.observe('production', 42, 1000);
    h.advance(4);
    expect(h.leases.current('production')).toBe(42);
    h.advance(6);
    expect(h.leases.current('production')).toBeInstanceOf(Promise);
  });

  test('when the read fails, then every request waiting on it sees the failure, a refresh nobody waits for fails quietly, and the next request reads again', async () => {
    const h = harness(10);
    const a = h.leases.current('production');
    const b = h.leases.current('production');
    h.endTurn();
    h.sent[0]!.fail(new Error('Redis is away'));
    expect((await Promise.allSettled([a, b])).map((r) => r.status)).toEqual(['rejected', 'rejected']);

    await h.grant(7); // the next request reads again, and gets a lease
    h.advance(6);
    expect(h.leases.current('production')).toBe(7);
    h.endTurn();
    h.sent[2]!.fail(new Error('Redis is away')); // the refresh: no unhandled rejection fails the test run
    await h.settle();
    h.advance(5);
    expect(h.leases.current('production')).toBeInstanceOf(Promise);
  });

  test('when a lease length is not positive, then building the leases fails', () => {
    expect(() => createGenerationLeases({ leaseMs: 0, read: async () => 0 })).toThrow(RangeError);
  });
});

describe('waiting out the leases (the creating side)', () => {
  test('when it resolves, then the whole lease has passed on the monotonic clock', async () => {
    const started = performance.now();
    await waitOutLeases(25);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  });
});
