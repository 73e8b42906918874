import type { Migration } from '../db/migrate';

/** One migration set for every store schema (production, staging) and for both drivers. */
export const petstoreMigrations: readonly Migration[] = [
  {
    id: '001_pets',
    sql: (s) => `
      CREATE TABLE ${s}.pets (
        id          bigserial PRIMARY KEY,
        name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
        category_id bigint NOT NULL CHECK (category_id > 0),
        status      text NOT NULL DEFAULT 'available' CHECK (status IN ('available', 'pending', 'sold')),
        created_at  timestamptz NOT NULL DEFAULT now()
      );
      -- A filtered page is an index range scan: WHERE status = $1 AND id > $2 ORDER BY id LIMIT n.
      CREATE INDEX pets_status_id ON ${s}.pets (status, id);
      CREATE TABLE ${s}.messages (
        id         text PRIMARY KEY,
        message    text NOT NULL,
        status     text NOT NULL DEFAULT 'queued',
        created_at timestamptz NOT NULL DEFAULT now()
      );`,
  },
];
