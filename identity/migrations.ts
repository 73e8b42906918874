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
  {
    // The operator's plane: plans (per-minute limit, optional monthly quota), account status, admitted
    // requests per calendar month, and the audit trail. Audit rows name accounts by id only and hold no
    // foreign key, so they outlive an erased account.
    id: '0004_plans_suspension_audit',
    sql: (s) => `
      CREATE TABLE ${s}.plans (
        name                text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,39}$'),
        requests_per_minute integer NOT NULL CHECK (requests_per_minute BETWEEN 1 AND 10000000),
        requests_per_month  bigint CHECK (requests_per_month BETWEEN 1 AND 1000000000000),
        set_by              text NOT NULL DEFAULT 'config' CHECK (set_by IN ('config', 'admin')),
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now()
      );
      INSERT INTO ${s}.plans (name, requests_per_minute) VALUES ('default', 600);

      ALTER TABLE ${s}.accounts
        ADD COLUMN status            text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
        ADD COLUMN suspended_at      timestamptz,
        ADD COLUMN suspension_reason text,
        ADD COLUMN plan              text NOT NULL DEFAULT 'default' REFERENCES ${s}.plans (name);

      ALTER TABLE ${s}.api_keys
        ADD COLUMN revocation_reason text,
        ADD COLUMN expiry_audited    boolean NOT NULL DEFAULT false;
      CREATE INDEX api_keys_prefix_idx ON ${s}.api_keys (prefix);
      CREATE INDEX api_keys_unaudited_expiry_idx ON ${s}.api_keys (expires_at) WHERE expires_at IS NOT NULL AND NOT expiry_audited;

      CREATE TABLE ${s}.account_usage_months (
        account_id bigint NOT NULL REFERENCES ${s}.accounts (id) ON DELETE CASCADE,
        month      date NOT NULL,
        requests   bigint NOT NULL DEFAULT 0 CHECK (requests >= 0),
        PRIMARY KEY (account_id, month)
      );

      CREATE TABLE ${s}.audit_log (
        id          bigserial PRIMARY KEY,
        at          timestamptz NOT NULL DEFAULT now(),
        actor       text NOT NULL,
        action      text NOT NULL,
        target_type text NOT NULL CHECK (target_type IN ('account', 'key', 'plan')),
        target_id   text NOT NULL,
        account_id  bigint,
        reason      text,
        request_id  text,
        details     jsonb
      );
      CREATE INDEX audit_log_account_id_idx ON ${s}.audit_log (account_id, id DESC);
    `,
  },
  {
    // A rolled key names its successor; the pair is revoked together (issue 24's key roll).
    id: '0005_api_key_roll',
    sql: (s) => `
      ALTER TABLE ${s}.api_keys
        ADD COLUMN rolled_to text REFERENCES ${s}.api_keys (id) ON DELETE SET NULL,
        ADD COLUMN rolled_at timestamptz;
      CREATE INDEX api_keys_rolled_to_idx ON ${s}.api_keys (rolled_to) WHERE rolled_to IS NOT NULL;
    `,
  },
  {
    // Requests per key and UTC day by outcome, added to in batches by every gateway process (issue 24's
    // usage chart). The account is kept beside the key so an account's days are one index range.
    id: '0006_key_usage_days',
    sql: (s) => `
      CREATE TABLE ${s}.key_usage_days (
        key_id        text NOT NULL REFERENCES ${s}.api_keys (id) ON DELETE CASCADE,
        account_id    bigint NOT NULL REFERENCES ${s}.accounts (id) ON DELETE CASCADE,
        day           date NOT NULL,
        ok            bigint NOT NULL DEFAULT 0 CHECK (ok >= 0),
        client_errors bigint NOT NULL DEFAULT 0 CHECK (client_errors >= 0),
        rate_limited  bigint NOT NULL DEFAULT 0 CHECK (rate_limited >= 0),
        server_errors bigint NOT NULL DEFAULT 0 CHECK (server_errors >= 0),
        PRIMARY KEY (key_id, day)
      );
      CREATE INDEX key_usage_days_account_id_day_idx ON ${s}.key_usage_days (account_id, day);
      CREATE INDEX key_usage_days_day_idx ON ${s}.key_usage_days (day);
    `,
  },
];

/** Applies the keys migrations to their schema (idempotent, safe with several processes). */
export function migrateKeys(db: Database): Promise<void> {
  return migrate(db, KEYS_SCHEMA, keysMigrations);
}
