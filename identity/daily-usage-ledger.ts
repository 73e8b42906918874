import { createBatchedWrites } from '../lib/batched-writes';
import type { Database } from '../db/database';
import { addOutcomes, countOutcome, type OutcomeCounts } from './daily-usage';

/** One key's responses on one UTC day that are not in the table yet. */
export interface DayTally extends OutcomeCounts {
  readonly keyId: string;
  /** Days since 1970-01-01 (daily-usage.ts `dayNumber`). */
  readonly day: number;
}

export interface DailyUsageLedgerDeps {
  db: Database;
  /** The qualified key_usage_days table the counts are added to. */
  table: string;
  /** The qualified api_keys table: a row's account is the key's, and a key deleted meanwhile is skipped. */
  keysTable: string;
  /** Today's UTC day number: a midnight timer's value in production (utc-day-clock.ts), so counting reads no clock. */
  today: () => number;
  flushIntervalMs: number;
  /** Called when a background flush fails (the counts are kept and retried). */
  onFlushError: (err: unknown) => void;
}

/** Requests per key, day and outcome, counted in memory on the hot path and added to the table in batches. */
export interface DailyUsageLedger {
  /**
   * Counts a finished response of an authenticated key in today's (UTC) tally: a Map lookup, a
   * comparison and an increment. Allocates only at a key's first response in a flush interval or on a new day.
   */
  record(keyId: string, status: number): void;
  /**
   * Runs `read` (a SELECT of stored days) in turn with the flushes and returns its result with copies
   * of the tallies not yet written for the keys `keysOf` names, so nothing is counted twice or missed.
   */
  readWithUnwritten<T>(read: () => Promise<T>, keysOf: (result: T) => Iterable<string>): Promise<{ result: T; unwritten: DayTally[] }>;
  /** Adds every pending tally to the table with one additive UPSERT. */
  flush(): Promise<void>;
  /** Stops the flush timer and writes what is pending. */
  close(): Promise<void>;
}

const tallyKey = (t: DayTally) => `${t.keyId} ${t.day}`;

/** One tally per key and day: an UPSERT may touch a row once. */
function mergeTallies(tallies: Iterable<DayTally>): DayTally[] {
  const merged = new Map<string, DayTally>();
  for (const tally of tallies) {
    const key = tallyKey(tally);
    const into = merged.get(key);
    if (into) addOutcomes(into, tally);
    else merged.set(key, { ...tally });
  }
  return [...merged.values()];
}

export function createDailyUsageLedger(deps: DailyUsageLedgerDeps): DailyUsageLedger {
  const { db, table, keysTable, today, flushIntervalMs, onFlushError } = deps;

  // Today's tally of each key used since the last flush, counted in place.
  let pending = new Map<string, DayTally>();
  // Tallies of earlier days, set aside when a key's first response of a new day arrives before the flush.
  let earlier: DayTally[] = [];
  // A batch whose write failed: kept apart, merged into the next flush.
  let failed: DayTally[] = [];

  async function write(): Promise<void> {
    if (pending.size === 0 && earlier.length === 0 && failed.length === 0) return;
    // Out of record's reach from here on.
    const batch = mergeTallies([...pending.values(), ...earlier, ...failed]);
    pending = new Map();
    earlier = [];
    failed = [];
    try {
      // Additive, so the gateway processes sharing the table sum their counts. Rows are locked in
      // the order of key ids in the database's collation, as an account erase and the other
      // processes' flushes lock them: JavaScript's order differs under en-US and they deadlocked.
      await db.query(
        `INSERT INTO ${table} AS d (key_id, account_id, day, ok, client_errors, rate_limited, server_errors)
         SELECT u.key_id, k.account_id, DATE '1970-01-01' + u.day, u.ok, u.client_errors, u.rate_limited, u.server_errors
         FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[])
           AS u(key_id, day, ok, client_errors, rate_limited, server_errors)
         JOIN ${keysTable} k ON k.id = u.key_id
         ORDER BY u.key_id, u.day
         ON CONFLICT (key_id, day) DO UPDATE
           SET ok = d.ok + EXCLUDED.ok,
               client_errors = d.client_errors + EXCLUDED.client_errors,
               rate_limited = d.rate_limited + EXCLUDED.rate_limited,
               server_errors = d.server_errors + EXCLUDED.server_errors`,
        [
          batch.map((t) => t.keyId),
          batch.map((t) => t.day),
          batch.map((t) => t.ok),
          batch.map((t) => t.clientErrors),
          batch.map((t) => t.rateLimited),
          batch.map((t) => t.serverErrors),
        ],
      );
    } catch (err) {
      failed = batch;
      writes.schedule();
      throw err;
    }
  }
  // Flushes and reads take turns (lib/batched-writes.ts says why).
  const writes = createBatchedWrites(write, { intervalMs: flushIntervalMs, onError: onFlushError });

  function unwrittenOf(keyIds: Iterable<string>): DayTally[] {
    const wanted = new Set(keyIds);
    const found: DayTally[] = [];
    for (const id of wanted) {
      const today = pending.get(id);
      if (today) found.push({ ...today });
    }
    for (const tally of [...earlier, ...failed]) if (wanted.has(tally.keyId)) found.push({ ...tally });
    return found;
  }

  return {
    record(keyId, status) {
      const day = today();
      let tally = pending.get(keyId);
      if (tally === undefined || tally.day !== day) {
        if (tally !== undefined) earlier.push(tally);
        tally = { keyId, day, ok: 0, clientErrors: 0, rateLimited: 0, serverErrors: 0 };
        pending.set(keyId, tally);
        writes.schedule();
      }
      countOutcome(tally, status);
    },

    readWithUnwritten(read, keysOf) {
      return writes.inTurn(async () => {
        const result = await read();
        return { result, unwritten: unwrittenOf(keysOf(result)) };
      });
    },

    flush: writes.flush,
    close: writes.close,
  };
}
