import { ident, type Database, type Queryable } from '../db/database';
import { ApiError } from '../lib/api-error';
import type { AuditContext, AuditLog } from './audit-log';
import { KEYS_SCHEMA } from './migrations';
import { dateOrNull } from './api-key-service';
import { normalizeEmail } from './account-service';
import { adminKeyView, ADMIN_KEY_COLUMNS, type AdminKeyRow, type AdminKeyView } from './admin-key-view';
import type { PlanService } from './plans';
import { accountChanged, type RevocationBus } from './revocation-bus';
import { monthOf } from './month';

export type AccountStatus = 'active' | 'suspended';

export interface AccountOverview {
  id: number;
  email: string;
  createdAt: Date;
  status: AccountStatus;
  suspendedAt: Date | null;
  suspensionReason: string | null;
  plan: string;
  /** Keys the account holds, whatever their status. */
  keyCount: number;
  /** Requests admitted this calendar month (UTC), as written by the gateways (at most a flush interval behind). */
  requestsThisMonth: number;
}

export interface AccountDetail extends AccountOverview {
  keys: AdminKeyView[];
}

export interface AccountPage {
  accounts: AccountOverview[];
  /** The id to pass as `after` for the next page, when there is one. */
  next: number | null;
}

/** What the operator may do to accounts (the admin API's accounts resource). Every write is audited. */
export interface AccountAdmin {
  /** By ascending id; with `email`, the one account of that email (exact, case-insensitive), if any. */
  list(query: { email?: string; limit: number; after?: number }): Promise<AccountPage>;
  /** 404 `not_found` for an unknown id. */
  get(id: number): Promise<AccountDetail>;
  /** Every key answers 401 on every process within a second; sessions end. 409 when already suspended. */
  suspend(id: number, reason: string, context: AuditContext): Promise<AccountOverview>;
  /** The keys that were active work again. 409 when not suspended. */
  reinstate(id: number, reason: string | null, context: AuditContext): Promise<AccountOverview>;
  /** Deletes the account with its sessions, keys and usage; resolves with the ids its keys had, for the stores outside PostgreSQL. */
  erase(id: number, reason: string | null, context: AuditContext): Promise<{ keyIds: string[] }>;
  /** 400 `invalid_request` for a plan that does not exist. */
  setPlan(id: number, plan: string, context: AuditContext): Promise<AccountOverview>;
}

export interface AccountAdminDeps {
  db: Database;
  audit: AuditLog;
  plans: Pick<PlanService, 'exists'>;
  bus: RevocationBus;
  now: () => Date;
}

interface OverviewRow {
  id: string | number;
  email: string;
  created_at: Date | string;
  status: AccountStatus;
  suspended_at: Date | string | null;
  suspension_reason: string | null;
  plan: string;
  key_count: number;
  requests_this_month: string | number;
}

const toOverview = (row: OverviewRow): AccountOverview => ({
  id: Number(row.id),
  email: row.email,
  createdAt: new Date(row.created_at),
  status: row.status,
  suspendedAt: dateOrNull(row.suspended_at),
  suspensionReason: row.suspension_reason,
  plan: row.plan,
  keyCount: Number(row.key_count),
  requestsThisMonth: Number(row.requests_this_month),
});

const notFound = () => new ApiError('not_found', 'No account with this id exists.');

export function createAccountAdmin({ db, audit, plans, bus, now }: AccountAdminDeps): AccountAdmin {
  const schema = ident(KEYS_SCHEMA);
  const accounts = `${schema}.accounts`;
  // $1 is always the first day of the current month, as a date ('YYYY-MM-DD'): a Date parameter would be cast through the session's time zone.
  const overviewSelect = `
    SELECT a.id, a.email, a.created_at, a.status, a.suspended_at, a.suspension_reason, a.plan,
           (SELECT count(*)::int FROM ${schema}.api_keys k WHERE k.account_id = a.id) AS key_count,
           COALESCE((SELECT u.requests FROM ${schema}.account_usage_months u WHERE u.account_id = a.id AND u.month = $1::date), 0) AS requests_this_month
    FROM ${accounts} a`;

  async function overview(id: number, tx: Queryable = db): Promise<AccountOverview | null> {
    const [row] = await tx.query<OverviewRow>(`${overviewSelect} WHERE a.id = $2`, [monthOf(now()), id]);
    return row ? toOverview(row) : null;
  }

  /** Runs a change on a locked account row, audits it in the same transaction, and tells every process. */
  async function change(id: number, apply: (tx: Queryable, before: Pick<AccountOverview, 'status' | 'plan'>) => Promise<void>): Promise<AccountOverview> {
    if (!validId(id)) throw notFound();
    const after = await db.transaction(async (tx) => {
      // The lock and what the change decides by, in one statement; the overview is read once, after it.
      const [before] = await tx.query<{ status: AccountStatus; plan: string }>(`SELECT status, plan FROM ${accounts} WHERE id = $1 FOR UPDATE`, [id]);
      if (!before) throw notFound();
      await apply(tx, before);
      return (await overview(id, tx))!;
    });
    await bus.publish(accountChanged(id));
    return after;
  }

  return {
    async list({ email, limit, after }) {
      const params: unknown[] = [monthOf(now()), limit + 1];
      const where: string[] = [];
      if (email !== undefined) where.push(`a.email = $${params.push(normalizeEmail(email))}`);
      if (after !== undefined) where.push(`a.id > $${params.push(after)}`);
      const rows = await db.query<OverviewRow>(`${overviewSelect} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY a.id LIMIT $2`, params);
      const page = rows.slice(0, limit).map(toOverview);
      return { accounts: page, next: rows.length > limit ? page[page.length - 1]!.id : null };
    },

    async get(id) {
      const account = validId(id) ? await overview(id) : null;
      if (!account) throw notFound();
      const rows = await db.query<AdminKeyRow>(`SELECT ${ADMIN_KEY_COLUMNS} FROM ${schema}.api_keys WHERE account_id = $1 ORDER BY created_at DESC, id`, [id]);
      const at = now();
      return { ...account, keys: rows.map((row) => adminKeyView(row, at)) };
    },

    suspend(id, reason, context) {
      return change(id, async (tx, before) => {
        if (before.status === 'suspended') throw new ApiError('conflict', `Account ${id} is already suspended.`);
        const at = now();
        await tx.query(`UPDATE ${accounts} SET status = 'suspended', suspended_at = $2, suspension_reason = $3 WHERE id = $1`, [id, at, reason]);
        // Its portal sessions end now: the portal resolves every request's session against this table.
        await tx.query(`UPDATE ${schema}.sessions SET revoked_at = $2 WHERE account_id = $1 AND revoked_at IS NULL`, [id, at]);
        await audit.record(context, { action: 'account.suspended', targetType: 'account', targetId: String(id), accountId: id, reason }, tx);
      });
    },

    reinstate(id, reason, context) {
      return change(id, async (tx, before) => {
        if (before.status !== 'suspended') throw new ApiError('conflict', `Account ${id} is not suspended.`);
        await tx.query(`UPDATE ${accounts} SET status = 'active', suspended_at = NULL, suspension_reason = NULL WHERE id = $1`, [id]);
        await audit.record(context, { action: 'account.reinstated', targetType: 'account', targetId: String(id), accountId: id, reason }, tx);
      });
    },

    async erase(id, reason, context) {
      if (!validId(id)) throw notFound();
      const keyIds = await db.transaction(async (tx) => {
        // Locked in the usage writes' order before the cascade runs: a write locks the rows it adds
        // to, then, at its end, the key and account each new row names. The cascade alone locked the
        // account and keys first, and an erase deadlocked with a write of the same account's usage.
        // The account's lock lets those writes' foreign-key checks through until the DELETE. This
        // holds while a day row's key check fires before its account check (the constraints'
        // creation order) and no flush commits a new day of the account between the day rows' lock
        // and the DELETE; otherwise PostgreSQL ends a deadlock after a second, as before.
        const [account] = await tx.query(`SELECT id FROM ${accounts} WHERE id = $1 FOR NO KEY UPDATE`, [id]);
        if (!account) throw notFound();
        await tx.query(`SELECT 1 FROM ${schema}.account_usage_months WHERE account_id = $1 ORDER BY month FOR UPDATE`, [id]);
        await tx.query(`SELECT 1 FROM ${schema}.key_usage_days WHERE account_id = $1 ORDER BY key_id, day FOR UPDATE`, [id]);
        const keys = await tx.query<{ id: string }>(`SELECT id FROM ${schema}.api_keys WHERE account_id = $1 ORDER BY id FOR UPDATE`, [id]);
        await tx.query(`DELETE FROM ${accounts} WHERE id = $1`, [id]);
        // Earlier entries keep the id and what was done, not what the account named its keys.
        await tx.query(`UPDATE ${schema}.audit_log SET details = NULL WHERE account_id = $1`, [id]);
        await audit.record(context, { action: 'account.deleted', targetType: 'account', targetId: String(id), accountId: id, reason, details: { keys: keys.length } }, tx);
        return keys.map((key) => key.id);
      });
      await bus.publish(accountChanged(id));
      return { keyIds };
    },

    async setPlan(id, plan, context) {
      if (!(await plans.exists(plan))) {
        throw new ApiError('invalid_request', `There is no plan named ${JSON.stringify(String(plan).slice(0, 40))}.`);
      }
      return change(id, async (tx, before) => {
        if (before.plan === plan) return;
        await tx.query(`UPDATE ${accounts} SET plan = $2 WHERE id = $1`, [id, plan]);
        await audit.record(context, { action: 'account.plan_changed', targetType: 'account', targetId: String(id), accountId: id, details: { from: before.plan, to: plan } }, tx);
      });
    },
  };
}


function validId(id: number): boolean {
  return Number.isSafeInteger(id) && id >= 1;
}
