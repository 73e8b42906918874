import { ident, type Database } from '../db/database';
import { ApiError } from '../lib/api-error';
import type { AuditContext, AuditLog } from './audit-log';
import { KEYS_SCHEMA } from './migrations';
import { PLANS_CHANGED, type RevocationBus } from './revocation-bus';

const DEFAULT_PLAN = 'default';
const PLAN_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;
const MAX_REQUESTS_PER_MINUTE = 10_000_000;
const MAX_REQUESTS_PER_MONTH = 1_000_000_000_000;

/** What an account may spend: per minute in each environment, and optionally per calendar month (UTC) in all. */
export interface Plan {
  name: string;
  requestsPerMinute: number;
  /** null: no monthly quota. */
  requestsPerMonth: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface PlanLimits {
  requestsPerMinute: number;
  requestsPerMonth: number | null;
}

/** The plans as this process knows them: read on the hot path, without I/O. */
export interface PlanBook {
  /** The named plan; the default plan for a name this process has not loaded yet. */
  get(name: string): Plan;
}

export interface PlanService extends PlanBook {
  /** Every plan, by name, from memory (reloaded on every change anywhere). */
  list(): Plan[];
  /** Creates or changes a plan; answers whether it was created. Takes effect everywhere within a second. */
  put(name: string, limits: PlanLimits, context: AuditContext): Promise<{ plan: Plan; created: boolean }>;
  /** Whether a plan of that name exists (in the database, not only in this process's memory). */
  exists(name: string): Promise<boolean>;
  /** Stops listening for changes. */
  close(): void;
}

export interface PlanServiceDeps {
  db: Database;
  bus: RevocationBus;
  audit: AuditLog;
  /** RATE_LIMIT_PER_MINUTE: the default plan's limit until an admin sets the default plan. */
  defaultRequestsPerMinute: number;
  now: () => Date;
  /** Told when a reload after a change fails (the previous plans stay in force). */
  onReloadError?: (err: unknown) => void;
}

interface PlanRow {
  name: string;
  requests_per_minute: number;
  requests_per_month: string | number | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const toPlan = (row: PlanRow): Plan => ({
  name: row.name,
  requestsPerMinute: Number(row.requests_per_minute),
  requestsPerMonth: row.requests_per_month === null ? null : Number(row.requests_per_month),
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

function readPlanLimits(limits: PlanLimits): PlanLimits {
  const { requestsPerMinute: perMinute, requestsPerMonth: perMonth } = limits;
  if (!Number.isSafeInteger(perMinute) || perMinute < 1 || perMinute > MAX_REQUESTS_PER_MINUTE) {
    throw new ApiError('invalid_request', `requestsPerMinute must be an integer from 1 to ${MAX_REQUESTS_PER_MINUTE}.`);
  }
  if (perMonth !== null && (!Number.isSafeInteger(perMonth) || perMonth < 1 || perMonth > MAX_REQUESTS_PER_MONTH)) {
    throw new ApiError('invalid_request', `requestsPerMonth must be null or an integer from 1 to ${MAX_REQUESTS_PER_MONTH}.`);
  }
  return { requestsPerMinute: perMinute, requestsPerMonth: perMonth };
}

/**
 * Plans live in the database and in every process's memory: the hot path reads memory, and a
 * change anywhere is published on the bus so every process reloads within a round trip.
 */
export async function createPlanService(deps: PlanServiceDeps): Promise<PlanService> {
  const { db, bus, audit, now } = deps;
  const table = `${ident(KEYS_SCHEMA)}.plans`;
  const onReloadError = deps.onReloadError ?? (() => {});
  let plans = new Map<string, Plan>();

  // RATE_LIMIT_PER_MINUTE keeps shaping the default plan until an admin sets it (set_by 'admin').
  await db.query(
    `INSERT INTO ${table} (name, requests_per_minute, requests_per_month, set_by) VALUES ($1, $2, NULL, 'config')
     ON CONFLICT (name) DO UPDATE SET requests_per_minute = EXCLUDED.requests_per_minute, updated_at = now()
     WHERE ${table}.set_by = 'config' AND ${table}.requests_per_minute <> EXCLUDED.requests_per_minute`,
    [DEFAULT_PLAN, deps.defaultRequestsPerMinute],
  );

  async function reload(): Promise<void> {
    const rows = await db.query<PlanRow>(`SELECT name, requests_per_minute, requests_per_month, created_at, updated_at FROM ${table} ORDER BY name`);
    plans = new Map(rows.map((row) => [row.name, toPlan(row)]));
  }
  await reload();

  const reloadQuietly = () => void reload().catch(onReloadError);
  const unsubscribe = bus.subscribe(function reloadChangedPlans(message) {
    if (message === PLANS_CHANGED) reloadQuietly();
  });
  const stopResync = bus.onResync(reloadQuietly);

  return {
    get: (name) => plans.get(name) ?? plans.get(DEFAULT_PLAN)!,

    list: () => [...plans.values()],

    async put(name, limits, context) {
      if (typeof name !== 'string' || !PLAN_NAME.test(name)) {
        throw new ApiError('invalid_request', 'A plan name is 1 to 40 lower-case letters, digits, "-" or "_", starting with a letter or digit.');
      }
      const { requestsPerMinute, requestsPerMonth } = readPlanLimits(limits);
      const at = now();
      const { row, created } = await db.transaction(async (tx) => {
        const details: Record<string, unknown> = { requestsPerMinute, requestsPerMonth };
        // Insert first: a read of a missing row locks nothing, but a concurrent put of the same new name waits here, then updates.
        const [inserted] = await tx.query<PlanRow>(
          `INSERT INTO ${table} (name, requests_per_minute, requests_per_month, set_by, created_at, updated_at) VALUES ($1, $2, $3, 'admin', $4, $4)
           ON CONFLICT (name) DO NOTHING
           RETURNING name, requests_per_minute, requests_per_month, created_at, updated_at`,
          [name, requestsPerMinute, requestsPerMonth, at],
        );
        if (inserted) {
          await audit.record(context, { action: 'plan.created', targetType: 'plan', targetId: name, accountId: null, details }, tx);
          return { row: inserted, created: true };
        }
        const [before] = await tx.query<PlanRow>(`SELECT requests_per_minute, requests_per_month FROM ${table} WHERE name = $1 FOR UPDATE`, [name]);
        const [row] = await tx.query<PlanRow>(
          `UPDATE ${table} SET requests_per_minute = $2, requests_per_month = $3, set_by = 'admin', updated_at = $4 WHERE name = $1
           RETURNING name, requests_per_minute, requests_per_month, created_at, updated_at`,
          [name, requestsPerMinute, requestsPerMonth, at],
        );
        details.was = { requestsPerMinute: Number(before!.requests_per_minute), requestsPerMonth: before!.requests_per_month === null ? null : Number(before!.requests_per_month) };
        await audit.record(context, { action: 'plan.updated', targetType: 'plan', targetId: name, accountId: null, details }, tx);
        return { row: row!, created: false };
      });
      const plan = toPlan(row);
      plans.set(plan.name, plan);
      await bus.publish(PLANS_CHANGED);
      return { plan, created };
    },

    async exists(name) {
      if (typeof name !== 'string' || !PLAN_NAME.test(name)) return false;
      return (await db.query(`SELECT 1 FROM ${table} WHERE name = $1`, [name])).length > 0;
    },

    close() {
      unsubscribe();
      stopResync();
    },
  };
}
