import type Redis from 'ioredis';
import { monthWindow } from '../../identity/month';
import type { CounterCount, LeaseCounter } from './budget-leases';

/** A month's Redis count outlives the month by this much, so a process whose clock lags still finds it. */
const EXPIRES_AFTER_MONTH_MS = 24 * 60 * 60 * 1000;

/**
 * Adds ARGV[1] to the month's count and returns it. A count Redis does not have (a fresh or
 * flushed Redis, a new month) starts at the seed ARGV[2], and expires ARGV[3] ms later; without
 * a seed (-1) it is left alone and -1 answered, so the caller reads one from the database.
 */
const TAKE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  if tonumber(ARGV[2]) < 0 then return -1 end
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
return redis.call('INCRBY', KEYS[1], ARGV[1])`;

export interface MonthCounterOptions {
  /** Every process's count when given; otherwise, and while Redis fails, this process's own. */
  redis?: Redis;
  /** Before the account id and the month, e.g. `asg:quota:`. */
  keyPrefix: string;
  /** What an account was admitted in a month (`YYYY-MM-DD`) as the database says: where a count that is not there starts. */
  seed: (accountId: string, month: string) => Promise<number>;
  /** Epoch ms: the month counted is the clock's. */
  clock: () => number;
}

/** One calendar month's counting state in this process; replaced whole when the month changes. */
interface MonthState {
  month: string;
  startsAt: number;
  endsAt: number;
  /** Seeds read from the database (at most one read per account and month), pending or done. */
  seeds: Map<string, Promise<number>>;
  /** Seeds known, so Redis can start a lost count again without asking the database twice. */
  seeded: Map<string, number>;
  /** This process's own counts: the count without Redis, and the insurance while Redis fails. */
  counts: Map<string, number>;
}

function monthStateAt(now: number): MonthState {
  return { ...monthWindow(now), seeds: new Map(), seeded: new Map(), counts: new Map() };
}

/**
 * Requests per account and calendar month (UTC), for the monthly quota's budget leases: a Redis
 * key per account and month (it expires a day after the month) shared by every process, or this
 * process's memory without Redis. A count that is not there is started from the database (the
 * usage ledger's table plus this process's unwritten counts), read once per account and month.
 */
export function createMonthCounter({ redis, keyPrefix, seed, clock }: MonthCounterOptions): LeaseCounter {
  let state = monthStateAt(clock());

  function stateAt(now: number): MonthState {
    if (now < state.startsAt || now >= state.endsAt) state = monthStateAt(now);
    return state;
  }

  function seedOf(s: MonthState, accountId: string): Promise<number> {
    let pending = s.seeds.get(accountId);
    if (!pending) {
      pending = seed(accountId, s.month).then(
        (value) => {
          s.seeded.set(accountId, value);
          return value;
        },
        (err: unknown) => {
          s.seeds.delete(accountId); // not read: the next take asks again
          throw err;
        },
      );
      s.seeds.set(accountId, pending);
    }
    return pending;
  }

  async function takeInMemory(s: MonthState, accountId: string, tokens: number): Promise<number> {
    if (!s.counts.has(accountId)) {
      const start = await seedOf(s, accountId);
      if (!s.counts.has(accountId)) s.counts.set(accountId, start);
    }
    const count = s.counts.get(accountId)! + tokens;
    s.counts.set(accountId, count);
    return count;
  }

  /** The count after the take, or null when Redis failed (a database failure is thrown as it is). */
  async function takeInRedis(client: Redis, s: MonthState, accountId: string, tokens: number, now: number): Promise<number | null> {
    const key = `${keyPrefix}${accountId}:${s.month.slice(0, 7)}`;
    const ttlMs = s.endsAt - now + EXPIRES_AFTER_MONTH_MS;
    const run = (start: number) => client.eval(TAKE_SCRIPT, 1, key, tokens, start, ttlMs).then(Number, () => null);
    const count = await run(s.seeded.get(accountId) ?? -1);
    return count === -1 ? run(await seedOf(s, accountId)) : count;
  }

  return {
    async take(accountId, tokens): Promise<CounterCount> {
      const now = clock();
      const s = stateAt(now);
      // While Redis is away, this process counts on its own, from the database's count, until it is back.
      const shared = redis ? await takeInRedis(redis, s, accountId, tokens, now) : null;
      const consumed = shared ?? (await takeInMemory(s, accountId, tokens));
      return { consumed, resetAt: s.endsAt };
    },
  };
}
