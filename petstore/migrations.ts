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
  {
    // With (status, id) the planner still walked the primary key and filtered: when one status
    // sits at low ids, `status=sold&after=500000` read 500,000 rows (≈ 150 ms at 1M pets). A
    // partial index per status holds exactly that status's ids in order, so every filtered page
    // is a short range scan whatever the data looks like. A new status needs its own index here.
    id: '002_pets_partial_status_indexes',
    sql: (s) => `
      CREATE INDEX pets_available_id ON ${s}.pets (id) WHERE status = 'available';
      CREATE INDEX pets_pending_id ON ${s}.pets (id) WHERE status = 'pending';
      CREATE INDEX pets_sold_id ON ${s}.pets (id) WHERE status = 'sold';
      DROP INDEX ${s}.pets_status_id;`,
  },
];
