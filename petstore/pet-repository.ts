import { randomUUID } from 'node:crypto';
import { ident, type Database } from '../db/database';

export type PetStatus = 'available' | 'pending' | 'sold';

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: PetStatus;
}

export interface NewPet {
  name: string;
  categoryId: number;
  status?: PetStatus;
}

export interface Message {
  id: string;
  message: string;
  status: 'queued';
  createdAt: string;
}

export interface ListQuery {
  limit: number;
  status?: PetStatus;
  after?: number;
}

export interface PetPage {
  pets: Pet[];
  /** The `after` cursor of the next page, when there is one. */
  nextAfter?: number;
}

interface PetRow {
  id: number;
  name: string;
  category_id: number;
  status: PetStatus;
}

const toPet = (r: PetRow): Pet => ({ id: r.id, name: r.name, categoryId: r.category_id, status: r.status });

/** Data access for one store (one schema). Plain objects in and out; knows nothing of HTTP. */
export function createPetRepository(db: Database, schemaName: string) {
  const t = `${ident(schemaName)}`;
  const columns = 'id, name, category_id, status';
  // Two fixed statements instead of `status = $1 OR $1 IS NULL`, so each uses its index range.
  const listAll = `SELECT ${columns} FROM ${t}.pets WHERE id > $1 ORDER BY id LIMIT $2`;
  const listByStatus = `SELECT ${columns} FROM ${t}.pets WHERE status = $3 AND id > $1 ORDER BY id LIMIT $2`;

  return {
    async list({ limit, status, after = 0 }: ListQuery): Promise<PetPage> {
      // One extra row tells whether a next page exists without a count.
      const rows = status
        ? await db.query<PetRow>(listByStatus, [after, limit + 1, status])
        : await db.query<PetRow>(listAll, [after, limit + 1]);
      const pets = rows.slice(0, limit).map(toPet);
      return rows.length > limit ? { pets, nextAfter: pets[pets.length - 1]!.id } : { pets };
    },

    async create(pet: NewPet): Promise<Pet> {
      const [row] = await db.query<PetRow>(
        `INSERT INTO ${t}.pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${columns}`,
        [pet.name.trim(), pet.categoryId, pet.status ?? 'available'],
      );
      return toPet(row!);
    },

    async get(id: number): Promise<Pet | undefined> {
      const [row] = await db.query<PetRow>(`SELECT ${columns} FROM ${t}.pets WHERE id = $1`, [id]);
      return row && toPet(row);
    },

    async queueMessage(message: string): Promise<Message> {
      const [row] = await db.query<{ id: string; message: string; created_at: Date }>(
        `INSERT INTO ${t}.messages (id, message) VALUES ($1, $2) RETURNING id, message, created_at`,
        [`msg_${randomUUID().replace(/-/g, '')}`, message],
      );
      return { id: row!.id, message: row!.message, status: 'queued', createdAt: row!.created_at.toISOString() };
    },
  };
}

export type PetRepository = ReturnType<typeof createPetRepository>;
