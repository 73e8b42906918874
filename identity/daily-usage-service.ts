import { ident, type Database } from '../db/database';
import { ApiError } from '../lib/api-error';
import { runEvery } from '../lib/run-every';
import { checkedKeyId, keyNotFound } from './api-key-service';
import { addOutcomes, dayNumber, fillDays, type OutcomeCounts, type UsageDay } from './daily-usage';
import { createDailyUsageLedger, type DayTally } from './daily-usage-ledger';
import { KEYS_SCHEMA } from './migrations';

export const DEFAULT_USAGE_DAYS = 30;
const MAX_USAGE_DAYS = 90;
/** Days kept in the table; older ones are deleted by the purge. Past a year, for year-on-year looks. */
const USAGE_RETENTION_DAYS = 400;
/** The purge has a day's worth of rows at most to delete: a few times a day is plenty. */
const USAGE_PURGE_INTERVAL_MS = 6 * 60 * 60 * 1000;

const invalidDays = () => new ApiError('invalid_request', `days must be a whole number from 1 to ${MAX_USAGE_DAYS}.`);

/** `days` as a client sends it (a query string value, or absent): a whole number from 1 to 90, or a 400 naming it. */
export function readUsageDays(value: unknown): number {
  if (value === undefined) return DEFAULT_USAGE_DAYS;
  const days = typeof value === 'string' && /^[0-9]{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(days >= 1 && days <= MAX_USAGE_DAYS)) throw invalidDays();
  return days;
}

export interface DailyUsageService {
  /** Hot path: a finished response of an authenticated key (see DailyUsageLedger.record). */
  record(keyId: string, status: number): void;
  /** The key's last `days` UTC days, today included, oldest first; 404 `not_found` unless the account owns the key. */
  forKey(accountId: number, keyId: string, days: number): Promise<UsageDay[]>;
  /** The same for all the account's keys together. */
  forAccount(accountId: number, days: number): Promise<UsageDay[]>;
  /** Deletes days older than USAGE_RETENTION_DAYS; resolves with the rows deleted. */
  purge(): Promise<number>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface DailyUsageServiceDeps {
  db: Database;
  /** Milliseconds since the epoch; `Date.now` unless a test moves the clock. */
  nowMs: () => number;
  /** Today's UTC day number for counting responses (utc-day-clock.ts); read from `nowMs` at each response if absent. */
  today?: () => number;
  /** How often counts are written. Default 5000 ms, as the per-key totals. */
  flushIntervalMs?: number;
  onFlushError?: (err: unknown) => void;
}

interface DayRow {
  day: number | null;
  ok: string | number | null;
  client_errors: string | number | null;
  rate_limited: string | number | null;
  server_errors: string | number | null;
}

/** Stored days plus what this process has not written yet, summed per day. */
function sumByDay(rows: readonly DayRow[], unwritten: readonly DayTally[]): Map<number, OutcomeCounts> {
  const byDay = new Map<number, OutcomeCounts>();
  const add = (day: number, counts: OutcomeCounts) => {
    const into = byDay.get(day);
    if (into) addOutcomes(into, counts);
    else byDay.set(day, { ...counts });
  };
  for (const row of rows) {
    if (row.day === null) continue;
    add(Number(row.day), { ok: Number(row.ok), clientErrors: Number(row.client_errors), rateLimited: Number(row.rate_limited), serverErrors: Number(row.server_errors) });
  }
  for (const t of unwritten) add(t.day, { ok: t.ok, clientErrors: t.clientErrors, rateLimited: t.rateLimited, serverErrors: t.serverErrors });
  return byDay;
}

/** Requests per key and UTC day by outcome: counted by the gateway, read by the portal. */
export function createDailyUsageService(deps: DailyUsageServiceDeps): DailyUsageService {
  const { db, nowMs } = deps;
  const schema = ident(KEYS_SCHEMA);
  const table = `${schema}.key_usage_days`;
  const keysTable = `${schema}.api_keys`;
  const ledger = createDailyUsageLedger({
    db,
    table,
    keysTable,
    today: deps.today ?? (() => dayNumber(nowMs())),
    flushIntervalMs: deps.flushIntervalMs ?? 5000,
    onFlushError: deps.onFlushError ?? (() => {}),
  });

  /** Today and the days before it, as day numbers; `days` is checked again here, the route is not the only caller. */
  const dayWindow = (days: number) => {
    if (!Number.isInteger(days) || days < 1 || days > MAX_USAGE_DAYS) throw invalidDays();
    const last = dayNumber(nowMs());
    return { first: last - days + 1, last };
  };
  const sums = `sum(d.ok) AS ok, sum(d.client_errors) AS client_errors, sum(d.rate_limited) AS rate_limited, sum(d.server_errors) AS server_errors`;

  return {
    record: ledger.record,

    async forKey(accountId, keyId, days) {
      const { first, last } = dayWindow(days);
      checkedKeyId(keyId);
      // One statement checks the owner and reads the days: a key without usage is one row of nulls.
      const { result: rows, unwritten } = await ledger.readWithUnwritten(
        () =>
          db.query<DayRow>(
            `SELECT d.day - DATE '1970-01-01' AS day, ${sums}
             FROM ${keysTable} k
             LEFT JOIN ${table} d ON d.key_id = k.id AND d.day BETWEEN DATE '1970-01-01' + $3::int AND DATE '1970-01-01' + $4::int
             WHERE k.id = $1 AND k.account_id = $2
             GROUP BY d.day`,
            [keyId, accountId, first, last],
          ),
        (found) => (found.length > 0 ? [keyId] : []),
      );
      if (rows.length === 0) throw keyNotFound();
      return fillDays(sumByDay(rows, unwritten.filter((t) => t.day >= first && t.day <= last)), first, last);
    },

    async forAccount(accountId, days) {
      const { first, last } = dayWindow(days);
      const { result, unwritten } = await ledger.readWithUnwritten(
        async () => {
          // Neither query waits for the other: on PostgreSQL they run on two pooled connections.
          const [keys, rows] = await Promise.all([
            db.query<{ id: string }>(`SELECT id FROM ${keysTable} WHERE account_id = $1`, [accountId]),
            db.query<DayRow>(
              `SELECT d.day - DATE '1970-01-01' AS day, ${sums}
               FROM ${table} d
               WHERE d.account_id = $1 AND d.day BETWEEN DATE '1970-01-01' + $2::int AND DATE '1970-01-01' + $3::int
               GROUP BY d.day`,
              [accountId, first, last],
            ),
          ]);
          return { keys, rows };
        },
        ({ keys }) => keys.map((k) => k.id),
      );
      return fillDays(sumByDay(result.rows, unwritten.filter((t) => t.day >= first && t.day <= last)), first, last);
    },

    async purge() {
      const oldestKept = dayNumber(nowMs()) - USAGE_RETENTION_DAYS + 1;
      // Locked in key and day order before the delete, as an account erase locks its days: in the
      // table's order, a purge and an erase of an account with old days deadlocked. The DELETE's own
      // day bound keeps its join to the old days' index range, not a scan of the whole table.
      const [row] = await db.query<{ deleted: number }>(
        `WITH old AS (SELECT key_id, day FROM ${table} WHERE day < DATE '1970-01-01' + $1::int ORDER BY key_id, day FOR UPDATE),
              gone AS (DELETE FROM ${table} AS d USING old WHERE d.key_id = old.key_id AND d.day = old.day AND d.day < DATE '1970-01-01' + $1::int RETURNING 1)
         SELECT count(*)::int AS deleted FROM gone`,
        [oldestKept],
      );
      return row!.deleted;
    },

    flush: ledger.flush,
    close: ledger.close,
  };
}

/** Purges old days once at start and then every `intervalMs`; returns the stop for the composition root. */
export function scheduleUsageDayPurge(usage: Pick<DailyUsageService, 'purge'>, options: { intervalMs?: number; onError: (err: unknown) => void }): () => Promise<void> {
  return runEvery(async () => void (await usage.purge()), options.intervalMs ?? USAGE_PURGE_INTERVAL_MS, options.onError);
}
