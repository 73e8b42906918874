import type { Database } from '../../db/database';
import { createPetRepository, type ListQuery } from '../../petstore/pet-repository';
import { PRODUCTION_SCHEMA } from './pet-table';

export interface ExplainedQuery {
  name: string;
  sql: string;
  params: readonly unknown[];
  plan: string;
  /** Index scans in the plan, e.g. "Index Scan using pets_pkey". */
  scans: string[];
  /** Whole-table work that a page must never need. */
  problems: string[];
  executionMs: number;
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of exactly the statements the repository sends: the repository
 * runs against a recording wrapper, so the SQL and parameters are its own, not a copy.
 * Each statement runs once before it is explained, as the gateway would have run it before.
 */
export async function explainList(db: Database, name: string, query: ListQuery): Promise<ExplainedQuery> {
  const sent: Array<{ sql: string; params: readonly unknown[] }> = [];
  const recording: Database = {
    ...db,
    query: <R>(sql: string, params: readonly unknown[] = []) => {
      sent.push({ sql, params });
      return db.query<R>(sql, params);
    },
  };
  await createPetRepository(recording, PRODUCTION_SCHEMA).list(query);
  const { sql, params } = sent[0]!;
  const rows = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
  const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
  const problems = [/Seq Scan/.test(plan) && 'sequential scan', /\bSort\b/.test(plan) && 'sort', /Bitmap Heap Scan/.test(plan) && 'bitmap heap scan'].filter(
    (p): p is string => typeof p === 'string',
  );
  return {
    name,
    sql,
    params,
    plan,
    scans: [...plan.matchAll(/(Index (?:Only )?Scan(?: Backward)? using \S+)/g)].map((m) => m[1]!),
    problems,
    executionMs: Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN),
  };
}
