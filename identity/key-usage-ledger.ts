import { createBatchedWrites } from '../lib/batched-writes';
import type { Database } from '../db/database';

/**
 * One key's usage since the last flush, mutated in place. Reading the clock allocates, so it is
 * read only when the entry is made (`usedAt`) and at the entry's first deprecated call
 * (`deprecatedAt`): the times written are those of the first use in each flush interval, so at
 * most one interval (5 s by default) earlier than the latest use.
 */
export interface PendingUsage {
  requests: number;
  deprecatedCalls: number;
  usedAt: Date;
  deprecatedAt: Date | null;
}

export const laterOf = (a: Date | null, b: Date | null | undefined): Date | null => (b && (!a || b > a) ? b : a);

function mergeInto(target: PendingUsage, from: PendingUsage): void {
  target.requests += from.requests;
  target.deprecatedCalls += from.deprecatedCalls;
  target.usedAt = laterOf(target.usedAt, from.usedAt)!;
  target.deprecatedAt = laterOf(target.deprecatedAt, from.deprecatedAt);
}

/** A key's usage not yet in the table, summed over the maps holding some (a copy: they stay as they are). */
function unwrittenUsage(keyId: string, maps: ReadonlyArray<ReadonlyMap<string, PendingUsage>>): PendingUsage | undefined {
  let sum: PendingUsage | undefined;
  for (const map of maps) {
    const usage = map.get(keyId);
    if (!usage) continue;
    if (sum) mergeInto(sum, usage);
    else sum = { ...usage };
  }
  return sum;
}

export interface KeyUsageLedgerDeps {
  db: Database;
  /** The qualified api_keys table the counts are added to. */
  table: string;
  now: () => Date;
  /** How often pending usage (counts, last-used times) is written. */
  flushIntervalMs: number;
  /** Called when a background flush fails (the pending usage is kept and retried). */
  onFlushError: (err: unknown) => void;
}

/** Per-key usage kept in memory on the hot path and added to the table in batches. */
export interface KeyUsageLedger {
  /** One Map lookup and two increments; allocation only at a key's first use since the last flush. */
  recordUse(keyId: string, deprecated: boolean): void;
  /**
   * Runs `read` (a SELECT of stored usage) in turn with the flushes and returns its result with
   * the usage of each key not yet written, so stored plus unwritten is never counted twice or missed.
   */
  readWithUnwritten<T>(read: () => Promise<T>): Promise<{ result: T; unwritten(keyId: string): PendingUsage | undefined }>;
  /** Adds pending counts and last-used times to the table with one UPDATE. */
  flush(): Promise<void>;
  /** Stops the flush timer and writes what is pending. */
  close(): Promise<void>;
}

export function createKeyUsageLedger(deps: KeyUsageLedgerDeps): KeyUsageLedger {
  const { db, table, now, flushIntervalMs, onFlushError } = deps;

  // Usage waits here (key id → counts and latest times) and is added to the table in batches.
  let pendingUsage = new Map<string, PendingUsage>();
  // Batches whose write failed, kept apart so new uses start fresh entries (with fresh times).
  let failedUsage = new Map<string, PendingUsage>();

  const writeUsage = async (): Promise<void> => {
    if (pendingUsage.size === 0 && failedUsage.size === 0) return;
    // No longer reachable by recordUse, so merging into it is safe.
    const batch = pendingUsage;
    pendingUsage = new Map();
    for (const [id, usage] of failedUsage) {
      const newer = batch.get(id);
      if (newer) mergeInto(newer, usage);
      else batch.set(id, usage);
    }
    failedUsage = new Map();
    const ids: string[] = [];
    const requests: number[] = [];
    const deprecatedCalls: number[] = [];
    const usedAt: Date[] = [];
    const deprecatedAt: Array<Date | null> = [];
    for (const [id, usage] of batch) {
      ids.push(id);
      requests.push(usage.requests);
      deprecatedCalls.push(usage.deprecatedCalls);
      usedAt.push(usage.usedAt);
      deprecatedAt.push(usage.deprecatedAt);
    }
    try {
      // Additive, so several gateway processes sharing the table sum their counts. The rows are
      // locked in key order first: an UPDATE locks them in its join's order, which follows each
      // process's own order of first use, and two flushes of the same keys deadlocked. The lock is
      // the UPDATE's own (NO KEY): FOR UPDATE would also wait for the daily-usage flush's
      // foreign-key checks, which lock the same rows in another order.
      await db.query(
        `WITH u AS MATERIALIZED (
           SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::timestamptz[], $5::timestamptz[])
             AS u(id, requests, deprecated_calls, used_at, deprecated_at)
         ), locked AS MATERIALIZED (
           SELECT k.id FROM ${table} AS k WHERE k.id IN (SELECT id FROM u) ORDER BY k.id FOR NO KEY UPDATE OF k
         )
         UPDATE ${table} AS k
         SET requests = k.requests + u.requests,
             deprecated_calls = k.deprecated_calls + u.deprecated_calls,
             last_used_at = GREATEST(k.last_used_at, u.used_at),
             last_deprecated_call_at = GREATEST(k.last_deprecated_call_at, u.deprecated_at)
         FROM u, locked
         WHERE k.id = u.id AND k.id = locked.id`,
        [ids, requests, deprecatedCalls, usedAt, deprecatedAt],
      );
    } catch (err) {
      // Kept for the next flush, which merges it with usage recorded meanwhile.
      failedUsage = batch;
      writes.schedule();
      throw err;
    }
  };
  // Flushes and the reads that add pending usage to stored usage take turns: a list never shows a
  // batch counted twice, nor counts dipping for a moment (lib/batched-writes.ts).
  const writes = createBatchedWrites(writeUsage, { intervalMs: flushIntervalMs, onError: onFlushError });

  return {
    // The gateway's hot path: one Map lookup and two increments. Allocation (an entry, the
    // clock) only at a key's first use, and first deprecated call, since the last flush.
    recordUse(keyId, deprecated) {
      let usage = pendingUsage.get(keyId);
      if (!usage) {
        usage = { requests: 0, deprecatedCalls: 0, usedAt: now(), deprecatedAt: null };
        pendingUsage.set(keyId, usage);
        writes.schedule();
      }
      usage.requests++;
      if (deprecated && usage.deprecatedCalls++ === 0) usage.deprecatedAt = usage.requests === 1 ? usage.usedAt : now();
    },

    async readWithUnwritten(read) {
      const { result, maps } = await writes.inTurn(async () => ({ result: await read(), maps: [pendingUsage, failedUsage] }));
      return { result, unwritten: (keyId: string) => unwrittenUsage(keyId, maps) };
    },

    flush: writes.flush,
    close: writes.close,
  };
}
