import { createBudgetLeases } from './budget-leases';
import { createMonthCounter } from './month-counter';
import type { RateDecision } from './rate-limiter';

const NOVEMBER_END = Date.UTC(2026, 11, 1);
const DECEMBER_END = Date.UTC(2027, 0, 1);

/** Seeds from a table the test fills, with every read recorded; `failing` makes reads fail. */
function seedTable(rows: Record<string, number> = {}) {
  const reads: string[] = [];
  const table = {
    reads,
    rows,
    failing: false,
    seed: async (accountId: string, month: string) => {
      reads.push(`${accountId}@${month}`);
      await new Promise((resolve) => setImmediate(resolve)); // a round trip
      if (table.failing) throw new Error('database unavailable');
      return rows[`${accountId}@${month}`] ?? 0;
    },
  };
  return table;
}

const settle = (decision: RateDecision | Promise<RateDecision>) => Promise.resolve(decision);

describe('month counter in process memory', () => {
  test('when an account is first counted in a month, then its count starts from what the database says, read once, even for takes that arrive together', async () => {
    const table = seedTable({ '7@2026-11-01': 40 });
    const now = Date.UTC(2026, 10, 20);
    const counter = createMonthCounter({ keyPrefix: 'q:', seed: table.seed, clock: () => now });
    const counts = await Promise.all([counter.take('7', 1), counter.take('7', 4), counter.take('8', 2)]);
    expect(counts.map((c) => c.consumed).sort((a, b) => a - b)).toEqual([2, 41, 45]);
    for (const c of counts) expect(c.resetAt).toBe(NOVEMBER_END);
    expect(await counter.take('7', 1)).toEqual({ consumed: 46, resetAt: NOVEMBER_END });
    expect(table.reads.sort()).toEqual(['7@2026-11-01', '8@2026-11-01']);
  });

  test('when the month changes, then the count starts again from the new month in the database, and its window ends with that month', async () => {
    const table = seedTable({ '7@2026-11-01': 40, '7@2026-12-01': 3 });
    let now = NOVEMBER_END - 1;
    const counter = createMonthCounter({ keyPrefix: 'q:', seed: table.seed, clock: () => now });
    expect(await counter.take('7', 1)).toEqual({ consumed: 41, resetAt: NOVEMBER_END });
    now = NOVEMBER_END;
    expect(await counter.take('7', 1)).toEqual({ consumed: 4, resetAt: DECEMBER_END });
    expect(table.reads).toEqual(['7@2026-11-01', '7@2026-12-01']);
  });

  test('when the database cannot be read, then the take fails and the next one reads again', async () => {
    const table = seedTable({ '7@2026-11-01': 10 });
    const counter = createMonthCounter({ keyPrefix: 'q:', seed: table.seed, clock: () => Date.UTC(2026, 10, 2) });
    table.failing = true;
    await expect(counter.take('7', 1)).rejects.toThrow('database unavailable');
    table.failing = false;
    expect((await counter.take('7', 1)).consumed).toBe(11);
    expect(table.reads).toEqual(['7@2026-11-01', '7@2026-11-01']);
  });

  test('when leases spend a monthly quota the database had half used, then the rest is admitted and the refusal lasts until the month ends', async () => {
    const table = seedTable({ '7@2026-11-01': 5 });
    const now = NOVEMBER_END - 90_500;
    const counter = createMonthCounter({ keyPrefix: 'q:', seed: table.seed, clock: () => now });
    const month = createBudgetLeases({ counter, windowMs: 28 * 86_400_000, clock: () => now });
    const decisions: RateDecision[] = [];
    for (let i = 0; i < 7; i++) decisions.push(await settle(month.consume('7', 10)));
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
    ]);
    // Seconds until the first instant of December, rounded up.
    for (const d of decisions) expect(d.resetSeconds).toBe(91);
    expect(month.refusal('7', 10)).toEqual({ allowed: false, remaining: 0, resetSeconds: 91 });
    expect(table.reads).toEqual(['7@2026-11-01']);
  });
});
