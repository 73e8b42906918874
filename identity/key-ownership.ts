import { ident, type Database } from '../db/database';
import { KEY_ID_SHAPE } from './api-key-service';
import { KEYS_SCHEMA } from './migrations';

/** Whether an account holds a key (revoked and expired keys included): what a key's own pages are shown by. */
export type KeyOwnership = (accountId: number, keyId: string) => Promise<boolean>;

export function createKeyOwnership(db: Database): KeyOwnership {
  const table = `${ident(KEYS_SCHEMA)}.api_keys`;
  return async function ownsKey(accountId, keyId) {
    if (!KEY_ID_SHAPE.test(keyId)) return false;
    const rows = await db.query(`SELECT 1 FROM ${table} WHERE id = $1 AND account_id = $2`, [keyId, accountId]);
    return rows.length > 0;
  };
}
