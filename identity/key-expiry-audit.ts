import { ident, type Database } from '../db/database';
import { runEvery } from '../lib/run-every';
import { auditTable } from './audit-log';
import { KEYS_SCHEMA } from './migrations';

/** A key expires without anyone acting; once a minute is close enough for the trail. */
const KEY_EXPIRY_AUDIT_INTERVAL_MS = 60 * 1000;

/**
 * Writes a `key.expired` entry, at the key's expiry time, for every key that has expired since
 * the last run (and was not revoked first). One statement marks and records each key, so
 * several processes running it together record each expiry once. The rows are locked in key
 * order, as the usage flush and a revoke lock them, so none of them can deadlock with another.
 */
export async function recordKeyExpiries(db: Database, now: Date): Promise<number> {
  const keys = `${ident(KEYS_SCHEMA)}.api_keys`;
  const rows = await db.query(
    `WITH locked AS MATERIALIZED (
       SELECT id FROM ${keys}
       WHERE expires_at <= $1 AND NOT expiry_audited AND revoked_at IS NULL
       ORDER BY id FOR NO KEY UPDATE
     ), expired AS (
       UPDATE ${keys} AS k SET expiry_audited = true
       FROM locked
       WHERE k.id = locked.id AND NOT k.expiry_audited AND k.revoked_at IS NULL
       RETURNING k.id, k.account_id, k.expires_at
     )
     INSERT INTO ${auditTable()} (at, actor, action, target_type, target_id, account_id)
     SELECT expires_at, 'system', 'key.expired', 'key', id, account_id FROM expired
     RETURNING id`,
    [now],
  );
  return rows.length;
}

export function scheduleKeyExpiryAudit(options: {
  db: Database;
  now: () => Date;
  intervalMs?: number;
  onError: (err: unknown) => void;
}): () => Promise<void> {
  return runEvery(async () => void (await recordKeyExpiries(options.db, options.now())), options.intervalMs ?? KEY_EXPIRY_AUDIT_INTERVAL_MS, options.onError);
}
