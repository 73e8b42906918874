import { createBatchedWrites } from '../lib/batched-writes';
import { ident, type Database } from '../db/database';
import { KEYS_SCHEMA } from './migrations';
import { monthWindow } from './month';

/** One calendar month's counts not yet written, by account id. */
interface MonthCounts {
  month: string;
  startsAt: number;
  endsAt: number;
  counts: Map<string, { requests: number }>;
}

function monthCountsAt(now: number): MonthCounts {
  return { ...monthWindow(now), counts: new Map() };
}

/** Counts waiting for a write, by account and month; written together in one statement. */
type Batch = Map<string, { accountId: string; month: string; requests: number }>;

function addTo(batch: Batch, accountId: string, month: string, requests: number): void {
  const key = `${accountId}|${month}`;
  const entry = batch.get(key);
  if (entry) entry.requests += requests;
  else batch.set(key, { accountId, month, requests });
}

export interface AccountUsageLedgerDeps {
  db: Database;
  /** Epoch ms: the month a request counts in is the clock's. */
  clock: () => number;
  /** How often pending counts are written. */
  flushIntervalMs: number;
  /** Called when a background flush fails (the counts are kept and retried). */
  onFlushError: (err: unknown) => void;
}

/**
 * Requests admitted per account and calendar month (UTC), counted in memory on the hot path and
 * added to `account_usage_months` in batches: one additive UPSERT per flush, so the processes
 * sharing the table sum their counts, and the count survives their restarts.
 */
export interface AccountUsageLedger {
  /**
   * One Map lookup and an increment; an allocation only at an account's first request since the
   * last flush. `now` is the clock as the caller has just read it, if it has.
   */
  recordAdmitted(accountId: string, now?: number): void;
  /**
   * Runs `read` (a SELECT of stored counts) in turn with the flushes and returns its result with
   * this process's counts not yet written, so stored plus unwritten is never counted twice or missed.
   */
  readWithUnwritten<T>(read: () => Promise<T>): Promise<{ result: T; unwritten(accountId: string, month: string): number }>;
  /** Stored plus not yet written by this process: an account's admitted requests in a month (`YYYY-MM-DD`). */
  requestsInMonth(accountId: string, month: string): Promise<number>;
  flush(): Promise<void>;
  /** Stops the flush timer and writes what is pending. */
  close(): Promise<void>;
}

export function createAccountUsageLedger({ db, clock, flushIntervalMs, onFlushError }: AccountUsageLedgerDeps): AccountUsageLedger {
  const schema = ident(KEYS_SCHEMA);
  const table = `${schema}.account_usage_months`;

  let current = monthCountsAt(clock());
  // Months the clock has left whose counts are not written yet.
  let earlier: MonthCounts[] = [];
  // A batch whose write failed, kept apart so new counts start fresh entries.
  let failed: Batch = new Map();

  function monthAt(now: number): MonthCounts {
    if (now >= current.startsAt && now < current.endsAt) return current;
    if (current.counts.size > 0) earlier.push(current);
    current = monthCountsAt(now);
    return current;
  }

  const write = async (): Promise<void> => {
    if (current.counts.size === 0 && earlier.length === 0 && failed.size === 0) return;
    // A new map: a read in progress may hold the failed one, and must not see counts merged into it.
    const batch: Batch = new Map();
    for (const { accountId, month, requests } of failed.values()) addTo(batch, accountId, month, requests);
    failed = new Map();
    for (const months of [...earlier, current]) for (const [accountId, { requests }] of months.counts) addTo(batch, accountId, months.month, requests);
    earlier = [];
    current = { ...current, counts: new Map() };
    const rows = [...batch.values()].sort((a, b) => Number(a.accountId) - Number(b.accountId) || a.month.localeCompare(b.month));
    try {
      // Additive, and in one order in every process (no deadlock between two flushes); an erased account's counts are dropped.
      await db.query(
        `INSERT INTO ${table} AS t (account_id, month, requests)
         SELECT u.account_id, u.month, u.requests
         FROM unnest($1::bigint[], $2::date[], $3::bigint[]) WITH ORDINALITY AS u(account_id, month, requests, n)
         JOIN ${schema}.accounts a ON a.id = u.account_id
         ORDER BY u.n
         ON CONFLICT (account_id, month) DO UPDATE SET requests = t.requests + EXCLUDED.requests`,
        [rows.map((r) => r.accountId), rows.map((r) => r.month), rows.map((r) => r.requests)],
      );
    } catch (err) {
      for (const { accountId, month, requests } of batch.values()) addTo(failed, accountId, month, requests);
      writes.schedule();
      throw err;
    }
  };
  // Flushes and the reads that add unwritten counts to stored ones take turns.
  const writes = createBatchedWrites(write, { intervalMs: flushIntervalMs, onError: onFlushError });

  function unwrittenIn(sources: { failed: Batch; months: MonthCounts[] }, accountId: string, month: string): number {
    let sum = sources.failed.get(`${accountId}|${month}`)?.requests ?? 0;
    for (const months of sources.months) if (months.month === month) sum += months.counts.get(accountId)?.requests ?? 0;
    return sum;
  }

  async function readWithUnwritten<T>(read: () => Promise<T>) {
    const { result, sources } = await writes.inTurn(async () => ({ result: await read(), sources: { failed, months: [...earlier, current] } }));
    return { result, unwritten: (accountId: string, month: string) => unwrittenIn(sources, accountId, month) };
  }

  return {
    recordAdmitted(accountId, now = clock()) {
      const months = monthAt(now);
      let entry = months.counts.get(accountId);
      if (!entry) {
        entry = { requests: 0 };
        months.counts.set(accountId, entry);
        writes.schedule();
      }
      entry.requests++;
    },

    readWithUnwritten,

    async requestsInMonth(accountId, month) {
      const { result, unwritten } = await readWithUnwritten(() =>
        db.query<{ requests: string | number }>(`SELECT requests FROM ${table} WHERE account_id = $1 AND month = $2::date`, [accountId, month]),
      );
      return Number(result[0]?.requests ?? 0) + unwritten(accountId, month);
    },

    flush: writes.flush,
    close: writes.close,
  };
}
