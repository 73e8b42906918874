import { ident, type Database } from '../db/database';
import { ApiError } from '../lib/api-error';
import { adminKeyView, ADMIN_KEY_COLUMNS, type AdminKeyRow, type AdminKeyView } from './admin-key-view';
import { parseApiKey } from './api-key-service';
import type { AuditContext, AuditLog } from './audit-log';
import { KEYS_SCHEMA } from './migrations';
import type { RevocationBus } from './revocation-bus';

export interface KeyPage {
  keys: AdminKeyView[];
  /** The id to pass as `after` for the next page, when there is one. */
  next: string | null;
}

export interface SecretReport {
  key: AdminKeyView;
  owner: { id: number; email: string };
  /** The key had been revoked before this report (the report is answered the same way). */
  alreadyRevoked: boolean;
}

/** What the operator may do to keys (the admin API's keys resource). Every revocation is audited. */
export interface KeyAdmin {
  /** Keys whose visible prefix starts with `prefix` (what a user pastes in a support ticket), by id. */
  findByPrefix(prefix: string, page: { limit: number; after?: string }): Promise<KeyPage>;
  /** Stops the key on every process within a second. 404 unknown, 409 already revoked. */
  revoke(keyId: string, reason: string, context: AuditContext): Promise<AdminKeyView>;
  /**
   * The leaked-key report: the key is found by its keyed hash and revoked. The secret is hashed
   * and dropped here, never logged or stored. 404 when no key has that secret.
   */
  revokeBySecret(secret: string, context: AuditContext): Promise<SecretReport>;
}

export interface KeyAdminDeps {
  db: Database;
  audit: AuditLog;
  bus: RevocationBus;
  hash: (secret: string) => string;
  now: () => Date;
}

/** A prefix searched: the environment's `asg_prod_`/`asg_stag_` and 1 to 6 characters of the key. */
const PREFIX_SEARCH = /^asg_(prod|stag)_[A-Za-z0-9_-]{1,6}$/;

const keyNotFound = () => new ApiError('not_found', 'No API key with this id exists.');

export function createKeyAdmin({ db, audit, bus, hash, now }: KeyAdminDeps): KeyAdmin {
  const schema = ident(KEYS_SCHEMA);
  const keys = `${schema}.api_keys`;

  /** Revokes by a condition on one key; answers the key as it is after, and whether it was revoked before. */
  async function revokeWhere(column: 'id' | 'hash', value: string, reason: string | null, context: AuditContext) {
    const at = now();
    const outcome = await db.transaction(async (tx) => {
      const [row] = await tx.query<AdminKeyRow & { hash: string }>(`SELECT ${ADMIN_KEY_COLUMNS}, hash FROM ${keys} WHERE ${column} = $1 FOR UPDATE`, [value]);
      if (!row) return null;
      if (row.revoked_at !== null) return { row, hash: row.hash, alreadyRevoked: true };
      const [updated] = await tx.query<AdminKeyRow>(
        `UPDATE ${keys} SET revoked_at = $2, revocation_reason = $3 WHERE id = $1 RETURNING ${ADMIN_KEY_COLUMNS}`,
        [row.id, at, reason],
      );
      const via = column === 'hash' ? 'leaked-key report' : 'admin';
      await audit.record(context, { action: 'key.revoked', targetType: 'key', targetId: row.id, accountId: Number(row.account_id), reason, details: { via } }, tx);
      return { row: updated!, hash: row.hash, alreadyRevoked: false };
    });
    // Published for an already revoked key too: harmless, and it repairs a publish that failed earlier.
    if (outcome) await bus.publish(outcome.hash);
    return outcome;
  }

  return {
    async findByPrefix(prefix, { limit, after }) {
      if (typeof prefix !== 'string' || !PREFIX_SEARCH.test(prefix)) {
        throw new ApiError('invalid_request', 'prefix must be a key prefix as the portal shows it: "asg_prod_" or "asg_stag_" and 1 to 6 more characters.');
      }
      const params: unknown[] = [prefix, limit + 1];
      const afterClause = after === undefined ? '' : `AND id > $${params.push(after)}`;
      const rows = await db.query<AdminKeyRow>(`SELECT ${ADMIN_KEY_COLUMNS} FROM ${keys} WHERE starts_with(prefix, $1) ${afterClause} ORDER BY id LIMIT $2`, params);
      const at = now();
      const page = rows.slice(0, limit).map((row) => adminKeyView(row, at));
      return { keys: page, next: rows.length > limit ? page[page.length - 1]!.id : null };
    },

    async revoke(keyId, reason, context) {
      const outcome = await revokeWhere('id', keyId, reason, context);
      if (!outcome) throw keyNotFound();
      if (outcome.alreadyRevoked) throw new ApiError('conflict', `Key ${keyId} is already revoked.`);
      return adminKeyView(outcome.row, now());
    },

    async revokeBySecret(secret, context) {
      if (!parseApiKey(secret)) throw new ApiError('invalid_request', 'key must be a full Animal Store API key ("asg_prod_…" or "asg_stag_…").');
      const outcome = await revokeWhere('hash', hash(secret), null, context);
      if (!outcome) throw new ApiError('not_found', 'No API key has this secret.');
      const [owner] = await db.query<{ id: string | number; email: string }>(`SELECT id, email FROM ${schema}.accounts WHERE id = $1`, [outcome.row.account_id]);
      // The account (and with it the key) was erased between the revocation and this read.
      if (!owner) throw new ApiError('not_found', 'No API key has this secret.');
      return {
        key: adminKeyView(outcome.row, now()),
        owner: { id: Number(owner!.id), email: owner!.email },
        alreadyRevoked: outcome.alreadyRevoked,
      };
    },
  };
}
