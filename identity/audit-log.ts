import { ident, type Queryable } from '../db/database';
import { KEYS_SCHEMA } from './migrations';

/** Who did it: `admin:<token label>`, `account:<id>` (the owner, in the portal) or `system` (expiry). */
export type Actor = `admin:${string}` | `account:${number}` | 'system';

export type AuditAction =
  | 'account.suspended'
  | 'account.reinstated'
  | 'account.deleted'
  | 'account.plan_changed'
  | 'key.created'
  | 'key.revoked'
  | 'key.expired'
  | 'key.rolled'
  | 'plan.created'
  | 'plan.updated';

/** Who asked for a change, and why: passed by the admin API and the portal to every write they make. */
export interface AuditContext {
  actor: Actor;
  /** The request's `X-Request-Id`, so an entry leads to its log lines. */
  requestId?: string;
}

export interface AuditRecord {
  action: AuditAction;
  targetType: 'account' | 'key' | 'plan';
  targetId: string;
  /** The account concerned, kept after the account is erased (the id only). */
  accountId: number | null;
  reason?: string | null;
  /** What changed (plan limits, a plan's old and new name, a key's environment): never a secret or an email. */
  details?: Record<string, unknown> | null;
  /** When it happened; default now (an expiry is recorded with the key's expiry time). */
  at?: Date;
}

export interface AuditEntry extends Required<Omit<AuditRecord, 'at'>> {
  id: number;
  at: Date;
  actor: Actor;
  requestId: string | null;
}

export interface AuditPage {
  entries: AuditEntry[];
  /** The id to pass as `after` for the next page, when there is one. */
  next: number | null;
}

export interface AuditLog {
  /** Writes one entry, in the caller's transaction when given one, so the change and its entry land together. */
  record(context: AuditContext, record: AuditRecord, tx?: Queryable): Promise<void>;
  /** Newest first; `after` is the last id of the previous page. */
  list(query: { limit: number; after?: number; accountId?: number }): Promise<AuditPage>;
}

interface AuditRow {
  id: string | number;
  at: Date | string;
  actor: Actor;
  action: AuditAction;
  target_type: AuditRecord['targetType'];
  target_id: string;
  account_id: string | number | null;
  reason: string | null;
  request_id: string | null;
  details: Record<string, unknown> | string | null;
}

export const auditTable = () => `${ident(KEYS_SCHEMA)}.audit_log`;

export function createAuditLog({ db, now = () => new Date() }: { db: Queryable; now?: () => Date }): AuditLog {
  const table = auditTable();
  return {
    async record(context, record, tx = db) {
      await tx.query(
        `INSERT INTO ${table} (at, actor, action, target_type, target_id, account_id, reason, request_id, details)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          record.at ?? now(),
          context.actor,
          record.action,
          record.targetType,
          record.targetId,
          record.accountId,
          record.reason ?? null,
          context.requestId ?? null,
          record.details ? JSON.stringify(record.details) : null,
        ],
      );
    },

    async list({ limit, after, accountId }) {
      const params: unknown[] = [limit + 1];
      const where: string[] = [];
      if (after !== undefined) where.push(`id < $${params.push(after)}`);
      if (accountId !== undefined) where.push(`account_id = $${params.push(accountId)}`);
      const rows = await db.query<AuditRow>(
        `SELECT id, at, actor, action, target_type, target_id, account_id, reason, request_id, details
         FROM ${table} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $1`,
        params,
      );
      const page = rows.slice(0, limit).map(toEntry);
      return { entries: page, next: rows.length > limit ? page[page.length - 1]!.id : null };
    },
  };
}

function toEntry(row: AuditRow): AuditEntry {
  return {
    id: Number(row.id),
    at: new Date(row.at),
    actor: row.actor,
    action: row.action,
    targetType: row.target_type,
    targetId: row.target_id,
    accountId: row.account_id === null ? null : Number(row.account_id),
    reason: row.reason,
    requestId: row.request_id,
    details: typeof row.details === 'string' ? (JSON.parse(row.details) as Record<string, unknown>) : row.details,
  };
}
