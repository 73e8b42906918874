import type { Database } from '../db/database';
import { migrate, type Migration } from '../db/migrate';

/** The schema that holds accounts, portal sessions and API keys. */
export const KEYS_SCHEMA = 'accounts';

/**
 * Append-only: never edit a migration that has shipped, add the next one.
 * Only a keyed hash of each API key is stored (`hash`), plus a short visible `prefix`.
 */
export const keysMigrations: Migration[] = [
  {
    id: '0001_accounts_sessions_api_keys',
    sql: (s) => `
      CREATE TABLE ${s}.accounts (
        id            bigserial PRIMARY KEY,
        email         text NOT NULL UNIQUE CHECK (char_length(email) BETWEEN 3 AND 254),
        password_hash text NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE ${s}.sessions (
        id         text PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES ${s}.accounts (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz
      );
      CREATE INDEX sessions_account_id_idx ON ${s}.sessions (account_id);
      CREATE INDEX sessions_expires_at_idx ON ${s}.sessions (expires_at);

      CREATE TABLE ${s}.api_keys (
        id           text PRIMARY KEY,
        account_id   bigint NOT NULL REFERENCES ${s}.accounts (id) ON DELETE CASCADE,
        name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        environment  text NOT NULL CHECK (environment IN ('production', 'staging')),
        prefix       text NOT NULL,
        hash         text NOT NULL UNIQUE CHECK (hash ~ '^[0-9a-f]{64}$'),
        created_at   timestamptz NOT NULL DEFAULT now(),
        expires_at   timestamptz,
        last_used_at timestamptz,
        revoked_at   timestamptz
      );
      CREATE INDEX api_keys_account_id_created_at_idx ON ${s}.api_keys (account_id, created_at DESC, id);
    `,
  },
  {
    // Per-key usage, added to in batches by every gateway process (so counters, not rows per request).
    id: '0002_api_key_usage_counts',
    sql: (s) => `
      ALTER TABLE ${s}.api_keys
        ADD COLUMN requests                bigint NOT NULL DEFAULT 0 CHECK (requests >= 0),
        ADD COLUMN deprecated_calls        bigint NOT NULL DEFAULT 0 CHECK (deprecated_calls >= 0),
        ADD COLUMN last_deprecated_call_at timestamptz;
    `,
  },
  {
    // Emails are looked up in NFC from now on, so a stored non-NFC spelling becomes NFC. Where two
    // accounts are spellings of one email (the look-alikes this closes), the one already in NFC, or
    // else the oldest, gets it; the others stay as they are and can no longer sign in.
    id: '0003_accounts_email_nfc',
    sql: (s) => `
      UPDATE ${s}.accounts a SET email = normalize(a.email, NFC)
      WHERE a.id IN (
          SELECT DISTINCT ON (normalize(email, NFC)) id FROM ${s}.accounts
          WHERE email IS NOT NFC NORMALIZED
          ORDER BY normalize(email, NFC), id
        )
        AND NOT EXISTS (SELECT 1 FROM ${s}.accounts b WHERE b.email = normalize(a.email, NFC));
    `,
  },
];

/** Applies the keys migrations to their schema (idempotent, safe with several processes). */
export function migrateKeys(db: Database): Promise<void> {
  return migrate(db, KEYS_SCHEMA, keysMigrations);
}
